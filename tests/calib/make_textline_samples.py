"""Renders COUNT text lines with examples/textlines.py and prepares the
first half as calib_list.txt and the second half as eval_list.txt.

    make_textline_samples.py OUT_DIR [COUNT]"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
import textlines  # noqa: E402


def main():
    out = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    pngs = textlines.render(os.path.join(out, "png"), count)
    half = count // 2
    textlines.prepare(out, pngs[:half], "calib_list.txt")
    textlines.prepare(out, pngs[half:], "eval_list.txt")


if __name__ == "__main__":
    main()
