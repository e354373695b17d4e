"""Checks that every module includes only itself and the modules it declares.

The modules and their declared dependencies come from the build
(build/qairt_modules.txt, written by CMakeLists.txt: "target|dirs|deps" per
line). A source file belongs to the module whose folder is the longest prefix
of its path; an `#include "X/..."` names module X when X is a module folder
under lib/ (or `passes`). A module including one it did not declare fails,
as does a module folder with sources that no module owns.

usage: check_module_deps.py MANIFEST REPO_ROOT
"""
import os
import re
import sys


def main():
    manifest, root = sys.argv[1], sys.argv[2]
    modules = {}  # target -> (dirs, deps)
    for line in open(manifest, encoding="utf-8"):
        line = line.strip()
        if not line:
            continue
        target, dirs, deps = line.split("|")
        modules[target] = ([d for d in dirs.split(",") if d],
                           {"qairt_" + d for d in deps.split(",") if d})
    dir_owner = {d: t for t, (dirs, _) in modules.items() for d in dirs}
    # Include prefix -> module: "ir/graph.h" -> the module owning lib/ir.
    prefix_owner = {}
    for d, t in dir_owner.items():
        parts = d.split("/")
        if parts[0] == "lib" and len(parts) == 2:
            prefix_owner[parts[1]] = t
        elif d == "passes":
            prefix_owner["passes"] = t

    failures = []
    files = 0
    for top in ("lib", "passes"):
        for folder, _, names in os.walk(os.path.join(root, top)):
            rel_folder = os.path.relpath(folder, root)
            for name in names:
                if not name.endswith((".cpp", ".cc", ".h", ".inc")):
                    continue
                rel = os.path.join(rel_folder, name)
                owners = [d for d in dir_owner if rel.startswith(d + "/")]
                if not owners:
                    failures.append("%s: no module owns this file" % rel)
                    continue
                owner = dir_owner[max(owners, key=len)]
                _, deps = modules[owner]
                files += 1
                text = open(os.path.join(root, rel), encoding="utf-8", errors="replace").read()
                for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, flags=re.M):
                    first = inc.split("/")[0]
                    used = prefix_owner.get(first) if "/" in inc else None
                    if used and used != owner and used not in deps:
                        failures.append("%s (%s) includes %s of %s, which %s does not declare"
                                        % (rel, owner, inc, used, owner))
    print("checked %d files of %d modules" % (files, len(modules)))
    if len(modules) < 10 or files < 100:
        failures.append("too few modules or files: wrong manifest or root?")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
