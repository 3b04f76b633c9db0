import ActiveObjects

/// Declared exactly like `StrippedModels.StrippedPerson`, with reflection metadata.
public final class ReflectedPerson: ActiveObject {
    @Column public var name: String = ""
    @Column public var age: Int = 0
    @JSONColumn public var tags: [String] = []

    public required init() {}
}
