#!/usr/bin/env python3
"""Writes Sources/Benchmarks/SearchWords.swift: the English vocabulary of the search workloads,
most frequent word first, counted in real English text available offline (prose only: code
blocks, inline code, identifiers and HTML dropped).

    Benchmarks/Scripts/search-words.py            # rewrites the Swift file

Sources (those missing are skipped, so the list depends on the machine; it is committed, and the
benchmark never reads these files): the comments of SQLite's header (/usr/include/sqlite3.h), the
library's README and DocC articles, the Swift toolchain's diagnostics notes
(/opt/swift/usr/share/doc/swift), the Rust books of a rustup toolchain (print.html of the book,
reference, nomicon, cargo, rustc…), the GPL-3, Apache-2.0 and MPL-2.0 texts in
/usr/share/common-licenses, and the Python reference (pydoc_data/topics.py) and standard library
docstrings of a Python 3 installation. A word is kept when it is lower case in the text (or only
capitalized: no camelCase identifiers, no ACRONYMS), has at least 3 letters (or is a common short
English word), and occurs at least twice in all, and in at least two of the groups of sources
or at least 3 times (which keeps domain words and drops most one-off names).
"""
import ast, collections, glob, os, re, subprocess, sys

here = os.path.dirname(os.path.abspath(__file__))
package = os.path.dirname(here)
root = os.path.dirname(package)

SHORT = set("a i am an as at be by do go he if in is it me my no of ok on or so to up us we".split())

def markdown(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    return re.sub(r"`[^`]*`", " ", text)

def header(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    text = " ".join(re.findall(r"/\*.*?\*/", text, flags=re.S))
    return re.sub(r"\[\[?([^\]]*)\]\]?", r"\1", text)

def html(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    text = re.sub(r"<(pre|code|script|style|nav)\b.*?</\1>", " ", text, flags=re.S)
    text = re.sub(r"<[^>]*>", " ", text)
    return re.sub(r"&[a-z]+;|&#[0-9]+;", " ", text)

def plain(path):
    return open(path, encoding="utf-8", errors="replace").read()

def python_sources():
    found = sorted(glob.glob("/usr/lib/python3*/pydoc_data/topics.py")
                   + glob.glob(os.path.expanduser("~/.pyenv/versions/3.1*/lib/python3.1*/pydoc_data/topics.py")))
    if not found:
        return None, []
    topics = found[-1]
    lib = os.path.dirname(os.path.dirname(topics))
    return topics, sorted(glob.glob(lib + "/*.py") + glob.glob(lib + "/*/*.py"))

def python_reference(path):
    namespace = {}
    exec(open(path, encoding="utf-8").read(), namespace)
    text = "\n".join(namespace["topics"].values())
    return "\n".join(l for l in text.split("\n") if not l.startswith("   "))   # examples

def python_docstrings(files):
    out = []
    for f in files:
        if "/test" in f or "idlelib" in f or "site-packages" in f:
            continue
        try:
            tree = ast.parse(open(f, encoding="utf-8").read())
        except Exception:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                d = ast.get_docstring(node)
                if d:
                    out.append("\n".join(l for l in d.split("\n") if not l.startswith(("    ", ">>>", "..."))))
    return "\n\n".join(out)

groups = {}
if os.path.exists("/usr/include/sqlite3.h"):
    groups["sqlite3.h"] = header("/usr/include/sqlite3.h")
docs = subprocess.run(["git", "-C", root, "ls-files", "README.md", "Sources/ActiveObjects/*.docc/*.md"],
                      capture_output=True, text=True).stdout.split()
groups["ActiveObjects docs"] = "\n".join(markdown(os.path.join(root, p)) for p in docs)
licenses = [p for p in ("/usr/share/common-licenses/GPL-3", "/usr/share/common-licenses/Apache-2.0",
                        "/usr/share/common-licenses/MPL-2.0") if os.path.exists(p)]
groups["licenses"] = "\n".join(plain(p) for p in licenses)
swift_docs = sorted(glob.glob("/opt/swift/usr/share/doc/swift/**/*.md", recursive=True))
if swift_docs:
    groups["Swift toolchain docs"] = "\n".join(markdown(p) for p in swift_docs)
rust_books = sorted(glob.glob(os.path.expanduser(
    "~/.rustup/toolchains/stable-*/share/doc/rust/html/*/print.html")))
if rust_books:
    groups["Rust books"] = "\n".join(html(p) for p in rust_books)
topics, library = python_sources()
if topics:
    groups["Python reference"] = python_reference(topics)
    groups["Python docstrings"] = python_docstrings(library)

counts = collections.Counter()
present = collections.defaultdict(set)
for name, text in groups.items():
    text = re.sub(r"</?[a-zA-Z]+[^>]*>", " ", text)         # HTML tags
    n = 0
    for token in re.findall(r"[A-Za-z]+(?:'[A-Za-z]+)?", text):
        if "'" in token or not re.fullmatch(r"[A-Z]?[a-z]+", token):
            continue
        word = token.lower()
        counts[word] += 1
        present[word].add(name)
        n += 1
    print(f"{name}: {n} words", file=sys.stderr)

words = [w for w, c in counts.most_common()
         if c >= 2 and (len(w) >= 3 or w in SHORT) and (len(present[w]) >= 2 or c >= 3)]
print(f"{len(counts)} distinct words, {len(words)} kept", file=sys.stderr)

lines, line = [], ""
for w in words:
    if len(line) + len(w) + 1 > 96:
        lines.append(line)
        line = ""
    line += (" " if line else "") + w
lines.append(line)
body = "\n".join("    " + l for l in lines)
swift = f'''// Generated by Benchmarks/Scripts/search-words.py: do not edit.
//
// The vocabulary of the search workloads: {len(words)} English words, most frequent first, counted
// in the prose of {", ".join(groups)} ({sum(counts.values())} words).
// The corpus draws word k (1-based) with a probability proportional to 1/k (Zipf).

let searchVocabularyText = """
{body}
    """
'''
open(os.path.join(package, "Sources/Benchmarks/SearchWords.swift"), "w").write(swift)
