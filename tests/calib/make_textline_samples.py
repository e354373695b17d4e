"""Renders real text-line images for the PaddleOCR direction classifier
(ch_ppocr_mobile_v2.0_cls, input [1, 3, 48, 192]) and writes them as raw
float32 tensors with two input_lists.

    make_textline_samples.py OUT_DIR [COUNT]

Each image is a line of words drawn with DejaVu Sans (Debian's
fonts-dejavu-core) in dark ink on a light, slightly varying background;
every second image is rotated by 180 degrees (the classifier's "180" class).
Preprocessing follows PaddleOCR's ClsResizeImg: resize to height 48 keeping
the aspect ratio (width capped at 192), RGB, (x / 255 - 0.5) / 0.5, CHW,
zero padding on the right. The first half of the images (even and odd
rotations alike) goes to calib_list.txt, the second half to eval_list.txt.
Deterministic: a fixed seed, no randomness from the system."""
import os
import random
import sys

import numpy as np
from PIL import Image, ImageDraw, ImageFont

WORDS = ("quantization encoding target kernel tensor scale offset channel block convert graph model "
         "invoice total amount date receipt street city station coffee market number order account "
         "hello world weather morning report summary figure table chapter section page note 2026 "
         "Snapdragon camera mobile label price 42.50 EUR USD shipping address phone email").split()
FONT_DIR = "/usr/share/fonts/truetype/dejavu"
FONTS = ["DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSerif.ttf", "DejaVuSansMono.ttf"]


def font(name, size):
    path = os.path.join(FONT_DIR, name)
    if not os.path.exists(path):
        path = os.path.join(FONT_DIR, "DejaVuSans.ttf")
    return ImageFont.truetype(path, size)


def render(rng, index):
    text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 5)))
    f = font(FONTS[index % len(FONTS)] if os.path.exists(os.path.join(FONT_DIR, FONTS[index % len(FONTS)]))
             else "DejaVuSans.ttf", rng.randint(26, 34))
    left, top, right, bottom = f.getbbox(text)
    w, h = right - left + 16, bottom - top + 12
    bg = tuple(rng.randint(200, 255) for _ in range(3))
    ink = tuple(rng.randint(0, 70) for _ in range(3))
    img = Image.new("RGB", (w, h), bg)
    ImageDraw.Draw(img).text((8 - left, 6 - top), text, font=f, fill=ink)
    if index % 2 == 1:
        img = img.rotate(180)
    return img


def preprocess(img):
    h, w = 48, 192
    ratio = img.width / float(img.height)
    rw = min(w, max(1, int(np.ceil(h * ratio))))
    img = img.resize((rw, h), Image.BILINEAR)
    x = np.asarray(img, dtype=np.float32) / 255.0
    x = (x - 0.5) / 0.5
    out = np.zeros((3, h, w), dtype=np.float32)
    out[:, :, :rw] = x.transpose(2, 0, 1)
    return out[None]


def main():
    out_dir = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    os.makedirs(out_dir, exist_ok=True)
    rng = random.Random(20261129)
    names = []
    for i in range(count):
        x = preprocess(render(rng, i))
        name = "line_%03d.raw" % i
        x.astype("<f4").tofile(os.path.join(out_dir, name))
        names.append(name)
    half = count // 2
    with open(os.path.join(out_dir, "calib_list.txt"), "w") as f:
        f.writelines("x:=%s\n" % n for n in names[:half])
    with open(os.path.join(out_dir, "eval_list.txt"), "w") as f:
        f.writelines("x:=%s\n" % n for n in names[half:])
    with open(os.path.join(out_dir, "labels.txt"), "w") as f:
        f.writelines("%d\n" % (i % 2) for i in range(count))


if __name__ == "__main__":
    main()
