#!/usr/bin/env bash
# `cmake --install` into a fresh prefix, then use what it installed the way
# another project would: find_package(qairt) with qairt::qairt, pkg-config
# qairt, the installed CLI, and the installed Python package (which finds the
# installed library by itself).
#   test_install.sh BUILD_DIR
set -uo pipefail
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
prefix=$tmp/prefix
if ! cmake --install "$build" --prefix "$prefix" > "$tmp/install.log" 2>&1; then
  echo "FAIL: cmake --install"; cat "$tmp/install.log"; exit 1
fi
lib=$(find "$prefix" -name 'libqairt.so.1' -print -quit)
libdir=$(dirname "${lib:-/nonexistent/x}")
for f in "$prefix/include/qairt/qairt.h" "$prefix/include/qairt/qairt_convert.h" "$prefix/bin/qairt" \
         "$libdir/cmake/qairt/qairtConfig.cmake" "$libdir/pkgconfig/qairt.pc" \
         "$prefix/share/qairt/python/qairt/__init__.py"; do
  [ -e "$f" ] || { echo "FAIL: not installed: ${f#"$prefix"/}"; fail=1; }
done
[ -n "$lib" ] || { echo "FAIL: libqairt.so.1 not installed"; exit 1; }

mkdir -p "$tmp/consumer"
cat > "$tmp/consumer/main.c" <<'C'
#include <stdio.h>
#include <qairt/qairt.h>
int main(void) {
  unsigned v = qairt_abi_version();
  printf("abi %u.%u\n", v >> 16, v & 0xFFFFu);
  return (v >> 16) == QAIRT_ABI_MAJOR && (v & 0xFFFFu) >= QAIRT_ABI_MINOR ? 0 : 1;
}
C
cat > "$tmp/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(consumer C)
find_package(qairt 1.7 REQUIRED)
add_executable(consumer main.c)
target_link_libraries(consumer PRIVATE qairt::qairt)
CM
if cmake -S "$tmp/consumer" -B "$tmp/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" > "$tmp/c.log" 2>&1 &&
   cmake --build "$tmp/consumer/build" >> "$tmp/c.log" 2>&1; then
  LD_LIBRARY_PATH=$libdir "$tmp/consumer/build/consumer" > "$tmp/c.out" || { echo "FAIL: find_package consumer run"; fail=1; }
else
  echo "FAIL: find_package(qairt) consumer does not build"; cat "$tmp/c.log"; fail=1
fi

if flags=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs qairt 2> "$tmp/pc.err"); then
  # shellcheck disable=SC2086
  if cc "$tmp/consumer/main.c" $flags -o "$tmp/pc_consumer" 2> "$tmp/pc.log"; then
    LD_LIBRARY_PATH=$libdir "$tmp/pc_consumer" > /dev/null || { echo "FAIL: pkg-config consumer run"; fail=1; }
  else
    echo "FAIL: pkg-config consumer does not build ($flags)"; cat "$tmp/pc.log"; fail=1
  fi
else
  echo "FAIL: pkg-config qairt"; cat "$tmp/pc.err"; fail=1
fi

# The installed CLI finds the installed library without LD_LIBRARY_PATH.
"$prefix/bin/qairt" version > "$tmp/v.out" 2>&1 || { echo "FAIL: installed qairt version"; cat "$tmp/v.out"; fail=1; }

# The installed Python package loads the installed library by itself.
if ! env -u QAIRT_LIBRARY PYTHONPATH="$prefix/share/qairt/python" /usr/bin/python3 -c \
    "import qairt, sys; sys.exit(0 if qairt.library_path.startswith('$prefix') else 1)" > "$tmp/py.out" 2>&1; then
  echo "FAIL: installed Python package does not load the installed library"; cat "$tmp/py.out"; fail=1
fi

# pip installs the installed package offline (Debian's setuptools, no
# network); the pip-installed copy still finds the library by itself.
src=$(cd "$(dirname "$0")/../.." && pwd)
cmake_version=$(sed -n 's/^project(qairt VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
py_version=$(sed -n 's/^version = "\([0-9.]*\)".*/\1/p' "$src/python/pyproject.toml")
[ -n "$cmake_version" ] && [ "$cmake_version" = "$py_version" ] ||
  { echo "FAIL: python/pyproject.toml version '$py_version' != CMake project version '$cmake_version'"; fail=1; }
if /usr/bin/python3 -m pip install --no-build-isolation --no-index --no-deps --quiet --target "$tmp/site" \
    "$prefix/share/qairt/python" > "$tmp/pip.log" 2>&1; then
  [ -e "$tmp/site/qairt/py.typed" ] || { echo "FAIL: pip-installed package lacks py.typed"; fail=1; }
  if ! (cd "$tmp" && env -u QAIRT_LIBRARY PYTHONPATH="$tmp/site" /usr/bin/python3 -c \
      "import qairt, sys; sys.exit(0 if qairt.library_path.startswith('$prefix') and qairt.version() else 1)") \
      > "$tmp/pip_py.out" 2>&1; then
    echo "FAIL: pip-installed Python package does not load the installed library"; cat "$tmp/pip_py.out"; fail=1
  fi
else
  echo "FAIL: pip install of the installed Python package"; cat "$tmp/pip.log"; fail=1
fi

[ "$fail" -eq 0 ] && echo "install: all checks passed"
exit "$fail"
