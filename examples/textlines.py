"""Text-line images for PaddleOCR's direction classifier
(ch_ppocr_mobile_v2.0_cls: input x [1, 3, 48, 192], output [1, 2]:
class 0 = upright, 1 = rotated by 180 degrees) and its recognizer
(ch_PP-OCRv4_rec: input x [1, 3, 48, W], CTC scores over 6625 characters).

    textlines.py render OUT_DIR COUNT               # classifier lines: PNGs + labels.txt (seeded)
    textlines.py render-rec OUT_DIR COUNT           # recognizer lines: PNGs + labels.txt (the text)
    textlines.py prepare [--width W] OUT_DIR PNG... # raw float32 tensors + input_list.txt

render draws lines of words with DejaVu Sans/Serif/Mono (Debian's
fonts-dejavu-core) in dark ink on a light background; every second image is
rotated by 180 degrees. render-rec draws what the recognizer receives in
PaddleOCR's pipeline, where the classifier has already turned lines upright:
upright lines of one to three words whose aspect ratio fits 48 x 320
(PP-OCRv4's rec_image_shape), so resizing to height 48 does not squeeze
them. prepare applies PaddleOCR's ClsResizeImg / RecResizeImg
preprocessing: resize to height 48 keeping the aspect ratio (width capped at
W, 192 unless told), RGB, (x / 255 - 0.5) / 0.5, CHW, zero padding on the
right; it writes one .raw per image and an input_list (x:=file lines) next
to them. Needs /usr/bin/python3 with python3-pil and python3-numpy."""
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


def _font(index, size):
    name = FONTS[index % len(FONTS)]
    path = os.path.join(FONT_DIR, name)
    if not os.path.exists(path):  # fonts-dejavu-core has Sans, Serif and Mono; keep going without the others
        path = os.path.join(FONT_DIR, "DejaVuSans.ttf")
    return ImageFont.truetype(path, size)


REC_WIDTH = 320  # PP-OCRv4's rec_image_shape 3,48,320


def render_one(rng, index, upright=False, words=(2, 5), max_aspect=None):
    """A text line; with max_aspect, words are drawn again until width / height fits it."""
    while True:
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(*words)))
        f = _font(index, rng.randint(26, 34))
        left, top, right, bottom = f.getbbox(text)
        w, h = right - left + 16, bottom - top + 12
        if max_aspect is None or w <= max_aspect * h:
            break
    bg = tuple(rng.randint(200, 255) for _ in range(3))
    ink = tuple(rng.randint(0, 70) for _ in range(3))
    img = Image.new("RGB", (w, h), bg)
    ImageDraw.Draw(img).text((8 - left, 6 - top), text, font=f, fill=ink)
    if index % 2 == 1 and not upright:
        img = img.rotate(180)
    if max_aspect is not None:
        img.info["text"] = text
    return img


def render_rec_one(rng, index):
    """A line as PaddleOCR's recognizer receives it (upright, fits 48 x REC_WIDTH); its text in info."""
    return render_one(rng, index, upright=True, words=(1, 3), max_aspect=REC_WIDTH / 48.0)


def preprocess(img, w=192):
    h = 48
    img = img.convert("RGB")
    rw = min(w, max(1, int(np.ceil(h * img.width / float(img.height)))))
    x = np.asarray(img.resize((rw, h), Image.BILINEAR), dtype=np.float32) / 255.0
    out = np.zeros((3, h, w), dtype=np.float32)
    out[:, :, :rw] = ((x - 0.5) / 0.5).transpose(2, 0, 1)
    return out[None]


def render(out_dir, count, seed=20261129):
    os.makedirs(out_dir, exist_ok=True)
    rng = random.Random(seed)
    paths = []
    for i in range(count):
        p = os.path.join(out_dir, "line_%03d.png" % i)
        render_one(rng, i).save(p, optimize=True)
        paths.append(p)
    with open(os.path.join(out_dir, "labels.txt"), "w") as f:
        f.writelines("%s %d\n" % (os.path.basename(p), i % 2) for i, p in enumerate(paths))
    return paths


def render_rec(out_dir, count, seed=20261203):
    """Recognizer lines; labels.txt holds each line's text."""
    os.makedirs(out_dir, exist_ok=True)
    rng = random.Random(seed)
    paths, texts = [], []
    for i in range(count):
        p = os.path.join(out_dir, "rec_%03d.png" % i)
        img = render_rec_one(rng, i)
        texts.append(img.info["text"])
        img.save(p, optimize=True)
        paths.append(p)
    with open(os.path.join(out_dir, "labels.txt"), "w") as f:
        f.writelines("%s %s\n" % (os.path.basename(p), t) for p, t in zip(paths, texts))
    return paths


def prepare(out_dir, pngs, list_name="input_list.txt", width=192):
    os.makedirs(out_dir, exist_ok=True)
    lines = []
    for p in pngs:
        raw = os.path.splitext(os.path.basename(p))[0] + ".raw"
        preprocess(Image.open(p), width).astype("<f4").tofile(os.path.join(out_dir, raw))
        lines.append("x:=%s\n" % raw)
    with open(os.path.join(out_dir, list_name), "w") as f:
        f.writelines(lines)
    return os.path.join(out_dir, list_name)


def main(argv):
    if len(argv) >= 3 and argv[0] == "render":
        render(argv[1], int(argv[2]))
    elif len(argv) >= 3 and argv[0] == "render-rec":
        render_rec(argv[1], int(argv[2]))
    elif len(argv) >= 5 and argv[0] == "prepare" and argv[1] == "--width":
        print(prepare(argv[3], argv[4:], width=int(argv[2])))
    elif len(argv) >= 3 and argv[0] == "prepare":
        print(prepare(argv[1], argv[2:]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
