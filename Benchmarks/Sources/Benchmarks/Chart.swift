import Foundation

// The ratio table as a picture: an SVG bar chart written by hand (no dependency). One group of
// bars per workload, one bar per contender, the height being the time relative to the C
// reference on a logarithmic axis (so that 1.1× and 1.3× stay apart next to 10×); the
// reference is the 1× line, ActiveObjects' target a red mark on its bar.

/// What the chart shows.
struct RatioChart {
    struct Bar {
        let contender: String
        let ratio: Double
    }

    struct Group {
        let workload: String
        let caption: String
        let target: Double?
        let bars: [Bar]
    }

    var title: String
    var subtitle: String
    var groups: [Group]
    var reference: String
    var subject: String

    /// Builds the chart from a report (every workload measured for the reference).
    init(report: Report, reference: String, subject: String, targets: [String: Double],
         captions: [String: String], title: String, subtitle: String) {
        self.title = title
        self.subtitle = subtitle
        self.reference = reference
        self.subject = subject
        let contenders = report.contenders.filter { $0 != reference }
        groups = report.workloads.compactMap { workload in
            guard let referenceMedian = report.median(workload, reference) else { return nil }
            let bars = contenders.compactMap { contender in
                report.median(workload, contender).map { Bar(contender: contender, ratio: $0 / referenceMedian) }
            }
            return bars.isEmpty ? nil
                : Group(workload: workload, caption: captions[workload] ?? "", target: targets[workload], bars: bars)
        }
    }

    private static let palette = ["#1f6fd1", "#9aa3ad", "#f08a24", "#5a9e4b", "#b05fc1"]

    /// The SVG document.
    func svg() -> String {
        let width = 980.0, height = 520.0
        let left = 78.0, right = 24.0, top = 96.0, bottom = 78.0
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        let measured = groups.flatMap { $0.bars.map(\.contender) }.uniqued()
        let contenders = measured.filter { $0 == subject } + measured.filter { $0 != subject }
        let ratios = groups.flatMap { $0.bars.map(\.ratio) } + groups.compactMap(\.target)
        let low = min(0.9, (ratios.min() ?? 1) * 0.85)
        let high = max(2, (ratios.max() ?? 2) * 1.3)
        func y(_ ratio: Double) -> Double {
            top + plotHeight * (1 - (log(ratio) - log(low)) / (log(high) - log(low)))
        }
        func color(_ contender: String) -> String {
            Self.palette[(contenders.firstIndex(of: contender) ?? 0) % Self.palette.count]
        }

        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif">
            <rect width="100%" height="100%" fill="#ffffff"/>
            <text x="\(left)" y="30" font-size="19" font-weight="bold" fill="#222">\(escape(title))</text>
            <text x="\(left)" y="52" font-size="13" fill="#555">\(escape(subtitle))</text>

            """

        // Axis: ticks on a log scale, labelled as ratios.
        let ticks = [0.5, 0.75, 1, 1.25, 1.5, 2, 3, 5, 7.5, 10, 15, 20, 30, 50, 100].filter { $0 >= low && $0 <= high }
        for tick in ticks {
            let ty = y(tick)
            let isReference = tick == 1
            out += "<line x1=\"\(f(left))\" y1=\"\(f(ty))\" x2=\"\(f(left + plotWidth))\" y2=\"\(f(ty))\" "
                + (isReference ? "stroke=\"#222\" stroke-width=\"1.5\"/>\n"
                    : "stroke=\"#e3e3e3\" stroke-width=\"1\"/>\n")
            out += "<text x=\"\(f(left - 8))\" y=\"\(f(ty + 4))\" font-size=\"12\" text-anchor=\"end\" fill=\"#444\">\(label(tick))</text>\n"
        }
        out += "<text transform=\"translate(20 \(f(top + plotHeight / 2))) rotate(-90)\" font-size=\"12\" text-anchor=\"middle\" fill=\"#444\">time ÷ \(escape(reference)) time (log scale, lower is better)</text>\n"
        out += "<line x1=\"\(f(left))\" y1=\"\(f(top))\" x2=\"\(f(left))\" y2=\"\(f(top + plotHeight))\" stroke=\"#444\" stroke-width=\"1\"/>\n"

        // Bars.
        let groupWidth = plotWidth / Double(max(1, groups.count))
        let barWidth = min(34, groupWidth * 0.78 / Double(max(1, contenders.count)))
        for (g, group) in groups.enumerated() {
            let center = left + groupWidth * (Double(g) + 0.5)
            let start = center - barWidth * Double(group.bars.count) / 2
            let bars = group.bars.sorted {
                (contenders.firstIndex(of: $0.contender) ?? 0) < (contenders.firstIndex(of: $1.contender) ?? 0)
            }
            for (b, bar) in bars.enumerated() {
                let x = start + barWidth * Double(b)
                let top = min(y(bar.ratio), y(1)), bottom = max(y(bar.ratio), y(1))
                out += "<rect x=\"\(f(x + 1))\" y=\"\(f(top))\" width=\"\(f(barWidth - 2))\" height=\"\(f(max(1, bottom - top)))\" fill=\"\(color(bar.contender))\"><title>\(escape(bar.contender)) \(escape(group.workload)): \(format(bar.ratio, decimals: 2))×</title></rect>\n"
                // The value above the bar (and above the target mark, which crosses the bar).
                var labelY = bar.ratio >= 1 ? top - 4 : bottom + 11
                if bar.contender == subject, let target = group.target {
                    out += "<line x1=\"\(f(x - 2))\" y1=\"\(f(y(target)))\" x2=\"\(f(x + barWidth + 2))\" y2=\"\(f(y(target)))\" stroke=\"#d62728\" stroke-width=\"2\" stroke-dasharray=\"4 2\"/>\n"
                    if bar.ratio >= 1 { labelY = min(labelY, y(target) - 5) }
                }
                out += "<text x=\"\(f(x + barWidth / 2))\" y=\"\(f(labelY))\" font-size=\"10\" text-anchor=\"middle\" fill=\"#222\">\(format(bar.ratio, decimals: bar.ratio >= 10 ? 1 : 2))×</text>\n"
            }
            out += "<text x=\"\(f(center))\" y=\"\(f(height - bottom + 20))\" font-size=\"13\" font-weight=\"bold\" text-anchor=\"middle\" fill=\"#222\">\(escape(group.workload))</text>\n"
            for (line, text) in group.caption.split(separator: "\n").enumerated() {
                out += "<text x=\"\(f(center))\" y=\"\(f(height - bottom + 35 + 13 * Double(line)))\" font-size=\"10.5\" text-anchor=\"middle\" fill=\"#666\">\(escape(String(text)))</text>\n"
            }
        }

        // Legend.
        var lx = left
        let ly = 74.0
        for contender in contenders {
            out += "<rect x=\"\(f(lx))\" y=\"\(f(ly - 10))\" width=\"12\" height=\"12\" fill=\"\(color(contender))\"/>\n"
            out += "<text x=\"\(f(lx + 17))\" y=\"\(f(ly))\" font-size=\"12.5\" fill=\"#222\">\(escape(contender))</text>\n"
            lx += 30 + Double(contender.count) * 7.2
        }
        out += "<line x1=\"\(f(lx))\" y1=\"\(f(ly - 4))\" x2=\"\(f(lx + 18))\" y2=\"\(f(ly - 4))\" stroke=\"#222\" stroke-width=\"1.5\"/>\n"
        out += "<text x=\"\(f(lx + 23))\" y=\"\(f(ly))\" font-size=\"12.5\" fill=\"#222\">\(escape(reference)) = 1×</text>\n"
        lx += 40 + Double(reference.count + 4) * 7.2
        if groups.contains(where: { $0.target != nil }) {
            out += "<line x1=\"\(f(lx))\" y1=\"\(f(ly - 4))\" x2=\"\(f(lx + 18))\" y2=\"\(f(ly - 4))\" stroke=\"#d62728\" stroke-width=\"2\" stroke-dasharray=\"4 2\"/>\n"
            out += "<text x=\"\(f(lx + 23))\" y=\"\(f(ly))\" font-size=\"12.5\" fill=\"#222\">\(escape(subject)) target</text>\n"
        }
        out += "</svg>\n"
        return out
    }

    private func f(_ value: Double) -> String { format(value, decimals: 1) }

    private func label(_ ratio: Double) -> String {
        ratio == ratio.rounded() ? "\(Int(ratio))×" : "\(format(ratio, decimals: 2).replacingOccurrences(of: "0$", with: "", options: .regularExpression))×"
    }

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
