import ActiveObjects

/// Declared exactly like `ReflectedModels.Person`, in a module without reflection metadata.
public final class StrippedPerson: ActiveObject {
    @Column public var name: String = ""
    @Column public var age: Int = 0
    @JSONColumn public var tags: [String] = []

    public required init() {}
}

/// A model superclass without reflection metadata, subclassed in a module that has it.
open class StrippedBase: ActiveObject {
    @Column public var title: String = ""

    public required init() {}
}
