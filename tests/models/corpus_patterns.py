"""Hand-written torch modules of the model corpus (tests/models/corpus.py) that
reproduce exporter patterns of models users bring, each written the way its
reference implementation is (Hugging Face GPT-2 and T5, the Hello Edge keyword
spotter, MobileViT, sentence-transformers' pooling, ...), at small sizes:

  pat_gpt2             HF Conv1D projections as addmm, a causal mask sliced from
                       a registered tril buffer and applied with torch.where
                       (finfo.min), tanh-approximated GELU, learned positions,
                       an lm head tied to the token embedding.
  pat_gpt2_leftpad     the same decoder fed as batched generation feeds it: left
                       padding, position ids (mask.cumsum(-1) - 1).clamp(min=0),
                       an additive finfo.min padding mask.
  pat_lstm_kws         2-layer batch-first nn.LSTM over MFCC frames.
  pat_gru_stream       2-layer batch-first nn.GRU with its state in and out (a
                       streaming denoiser's gain mask).
  pat_unet             bilinear nn.Upsample (align_corners False), ConvTranspose2d,
                       PixelShuffle, an F.interpolate to a skip's size, skip
                       concatenations.
  pat_stft_logmel      the STFT as a strided Conv1d with windowed DFT kernels
                       (torch 1.13 has no ONNX export of torch.stft at any opset),
                       reflect padding, a mel matmul, log(x + eps), clamp_min.
  pat_einsum_attn      attention written with torch.einsum on sequence-first
                       heads ([b, t, h, d], the equations need transposes), a bool
                       padding mask input applied with masked_fill(-inf),
                       F.gelu(tanh).
  pat_einsum_attn_bhqd the same with heads moved first, whose einsums are plain
                       batched matrix products.
  pat_t5_relbias       T5's bucketed relative position bias (arange, abs, log,
                       where, .to(torch.long), an embedding lookup).
  pat_mobilevit        MobileViT's unfolding of 2x2 patches to sequences and back
                       by reshape/transpose around a transformer.
  pat_topk_classifier  a classifier that ends in argmax and topk (int64 outputs).
  pat_embed_meanpool   nn.Embedding(padding_idx=0), masked mean pooling and
                       F.normalize.

Attention hidden sizes are multiples of 64 so that the W4 LPBQ recipe (64-wide
blocks along the input dimension) applies to every projection.
"""
import math
from collections import OrderedDict

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from corpus_npm import speech_like
from corpus_vision import IMAGENET_MEAN, IMAGENET_STD, natural_image

FLOAT_MIN = torch.finfo(torch.float32).min


def log_mel_like(rng, mels, frames):
    """[frames, mels] natural-log mel energies: a few formant-like bands drifting over time above a noise floor."""
    f = np.arange(mels)[None, :]
    t = np.arange(frames)[:, None]
    level = np.full((frames, mels), -9.0)
    for _ in range(4):
        centre = rng.uniform(3, mels - 3) + 3 * np.sin(t / rng.uniform(10, 40) + rng.uniform(0, 6))
        level = np.maximum(level, rng.uniform(-3, 1) - 0.3 * (f - centre) ** 2)
    return level + rng.normal(0, 0.5, level.shape)


def token_batch(rng, vocab, t, left_pad=False):
    """(ids, mask) [1, t] int64: a random-length sequence padded with id 0 on the right (or the left)."""
    n = int(rng.integers(t // 2, t + 1))
    ids = np.zeros((1, t), np.int64)
    mask = np.zeros((1, t), np.int64)
    span = slice(t - n, t) if left_pad else slice(0, n)
    ids[0, span] = rng.integers(1, vocab, size=n)
    mask[0, span] = 1
    return ids, mask


# -- GPT-2 (Hugging Face's modeling_gpt2) --------------------------------------------------------------------------

GPT2 = dict(vocab=256, dim=128, layers=2, heads=4, ffn=256, positions=64)
GPT2_SEQ = 16


class Conv1D(nn.Module):
    """GPT-2's projection: a Linear whose weight is stored [in, out], applied with addmm on 2-D rows."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        # nn.Linear's init scale, not GPT-2's std 0.02: the latter leaves random attention uniform, so a conversion
        # that flattened the scores would still match the float model.
        bound = nx ** -0.5
        self.weight = nn.Parameter(torch.empty(nx, nf).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.empty(nf).uniform_(-bound, bound))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


def gelu_new(x):
    """GPT-2's GELU: the tanh approximation written out."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class GPT2Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads, self.head_dim, self.split_size = c["heads"], c["dim"] // c["heads"], c["dim"]
        n = c["positions"]
        self.register_buffer("bias", torch.tril(torch.ones((n, n), dtype=torch.bool)).view(1, 1, n, n),
                             persistent=False)
        self.c_attn = Conv1D(3 * c["dim"], c["dim"])
        self.c_proj = Conv1D(c["dim"], c["dim"])

    def _split_heads(self, x):
        x = x.view(x.size()[:-1] + (self.heads, self.head_dim))
        return x.permute(0, 2, 1, 3)

    def forward(self, x, attention_mask=None):
        query, key, value = self.c_attn(x).split(self.split_size, dim=2)
        query, key, value = self._split_heads(query), self._split_heads(key), self._split_heads(value)
        w = torch.matmul(query, key.transpose(-1, -2))
        w = w / torch.full([], value.size(-1) ** 0.5, dtype=w.dtype)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length:key_length, :key_length]
        w = torch.where(causal_mask, w, torch.full([], FLOAT_MIN, dtype=w.dtype))
        if attention_mask is not None:
            w = w + attention_mask
        out = torch.matmul(torch.softmax(w, dim=-1), value)
        out = out.permute(0, 2, 1, 3).contiguous()
        return self.c_proj(out.view(out.size()[:-2] + (self.heads * self.head_dim,)))


class GPT2Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1 = nn.LayerNorm(c["dim"])
        self.attn = GPT2Attention(c)
        self.ln_2 = nn.LayerNorm(c["dim"])
        self.c_fc = Conv1D(c["ffn"], c["dim"])
        self.c_proj = Conv1D(c["dim"], c["ffn"])

    def forward(self, x, attention_mask=None):
        x = x + self.attn(self.ln_1(x), attention_mask)
        return x + self.c_proj(gelu_new(self.c_fc(self.ln_2(x))))


class GPT2LMHead(nn.Module):
    """input_ids [1, T] (int64) -> logits [1, T, vocab]; with padded=True also attention_mask [1, T] (int64,
    left padding), from which the position ids and the additive padding mask come, as in HF's generate."""

    def __init__(self, c=GPT2, padded=False):
        super().__init__()
        self.padded = padded
        self.wte = nn.Embedding(c["vocab"], c["dim"])
        self.wpe = nn.Embedding(c["positions"], c["dim"])
        self.h = nn.ModuleList([GPT2Block(c) for _ in range(c["layers"])])
        self.ln_f = nn.LayerNorm(c["dim"])
        self.lm_head = nn.Linear(c["dim"], c["vocab"], bias=False)
        self.lm_head.weight = self.wte.weight
        # GPT-2's embedding init (std 0.02): with nn.Embedding's unit variance the token embedding would dominate
        # the residual stream and the logits would barely depend on attention.
        for emb in (self.wte, self.wpe):
            nn.init.normal_(emb.weight, std=0.02)

    def forward(self, input_ids, attention_mask=None):
        if self.padded:
            position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)
            additive = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * FLOAT_MIN
        else:
            position_ids = torch.arange(0, input_ids.size(-1), dtype=torch.long).unsqueeze(0)
            additive = None
        x = self.wte(input_ids) + self.wpe(position_ids)
        for block in self.h:
            x = block(x, additive)
        return self.lm_head(self.ln_f(x))


def pat_gpt2():
    def feeds(model, rng):
        return OrderedDict(input_ids=rng.integers(0, GPT2["vocab"], size=(1, GPT2_SEQ)).astype(np.int64))
    return GPT2LMHead(), [("input_ids", [1, GPT2_SEQ], "int64")], ["logits"], feeds


def pat_gpt2_leftpad():
    def feeds(model, rng):
        ids, mask = token_batch(rng, GPT2["vocab"], GPT2_SEQ, left_pad=True)
        return OrderedDict(input_ids=ids, attention_mask=mask)
    inputs = [("input_ids", [1, GPT2_SEQ], "int64"), ("attention_mask", [1, GPT2_SEQ], "int64")]
    return GPT2LMHead(padded=True), inputs, ["logits"], feeds


# -- recurrent audio models -----------------------------------------------------------------------------------------

KWS = dict(frames=49, mfcc=40, hidden=64, classes=12)
GRU = dict(frames=32, mels=40, hidden=64, layers=2)


class LstmKws(nn.Module):
    """MFCC frames [1, T, 40] -> keyword logits [1, 12]: Hello Edge's LSTM, classified from the last step."""

    def __init__(self, c=KWS):
        super().__init__()
        self.lstm = nn.LSTM(c["mfcc"], c["hidden"], num_layers=2, batch_first=True)
        self.fc = nn.Linear(c["hidden"], c["classes"])

    def forward(self, mfcc):
        out, _ = self.lstm(mfcc)
        return self.fc(out[:, -1])


def dct_matrix(n):
    """Orthonormal DCT-II [n, n], the transform from log-mel energies to MFCCs."""
    k, i = np.arange(n)[:, None], np.arange(n)[None, :]
    m = np.cos(np.pi * k * (2 * i + 1) / (2 * n)) * np.sqrt(2.0 / n)
    m[0] /= np.sqrt(2.0)
    return m


def pat_lstm_kws():
    c = KWS
    def feeds(model, rng):
        mfcc = log_mel_like(rng, c["mfcc"], c["frames"]) @ dct_matrix(c["mfcc"]).T
        return OrderedDict(mfcc=mfcc[None].astype(np.float32))
    return LstmKws(), [("mfcc", [1, c["frames"], c["mfcc"]], "float32")], ["logits"], feeds


class GruStream(nn.Module):
    """One chunk of a streaming denoiser: log-mel [1, T, 40] and the GRU state [2, 1, 64] -> a per-band gain
    mask [1, T, 40] and the next state."""

    def __init__(self, c=GRU):
        super().__init__()
        self.gru = nn.GRU(c["mels"], c["hidden"], num_layers=c["layers"], batch_first=True)
        self.fc = nn.Linear(c["hidden"], c["mels"])

    def forward(self, features, h0):
        out, hn = self.gru(features, h0)
        return torch.sigmoid(self.fc(out)), hn


def pat_gru_stream():
    c = GRU
    def feeds(model, rng):
        """The chunk after another: the state is what the model computes over the preceding chunk."""
        both = torch.from_numpy((log_mel_like(rng, c["mels"], 2 * c["frames"]) / 4.0)[None].astype(np.float32))
        with torch.no_grad():
            _, h = model(both[:, :c["frames"]], torch.zeros(c["layers"], 1, c["hidden"]))
        return OrderedDict(features=both[:, c["frames"]:].numpy(), h0=h.numpy())
    inputs = [("features", [1, c["frames"], c["mels"]], "float32"), ("h0", [c["layers"], 1, c["hidden"]], "float32")]
    return GruStream(), inputs, ["gain", "hn"], feeds


# -- U-Net ------------------------------------------------------------------------------------------------------------

def conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class UNet(nn.Module):
    """Image [1, 3, 64, 64] -> class logits per pixel [1, 4, 64, 64]; each decoder level upsamples its own way."""

    def __init__(self, classes=4):
        super().__init__()
        self.enc1, self.enc2, self.enc3 = conv_block(3, 16), conv_block(16, 32), conv_block(32, 64)
        self.pool = nn.MaxPool2d(2)
        self.bottleneck = conv_block(64, 64)
        self.up4 = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.dec4 = conv_block(64 + 64, 64)
        self.up3 = nn.ConvTranspose2d(64, 32, kernel_size=2, stride=2)
        self.dec3 = conv_block(32 + 32, 32)
        self.up2 = nn.Sequential(nn.Conv2d(32, 16 * 4, 3, padding=1), nn.PixelShuffle(2))
        self.dec2 = conv_block(16 + 16, 16)
        self.side = nn.Conv2d(64, 16, 1)
        self.head = nn.Conv2d(16 + 16, classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)                 # 64x64
        e2 = self.enc2(self.pool(e1))     # 32x32
        e3 = self.enc3(self.pool(e2))     # 16x16
        b = self.bottleneck(self.pool(e3))  # 8x8
        d4 = self.dec4(torch.cat([self.up4(b), e3], dim=1))
        d3 = self.dec3(torch.cat([self.up3(d4), e2], dim=1))
        d2 = self.dec2(torch.cat([self.up2(d3), e1], dim=1))
        # A deep-supervision side branch resized to the skip's size (Resize by sizes read from a shape).
        side = F.interpolate(self.side(b), size=e1.shape[-2:], mode="bilinear", align_corners=False)
        return self.head(torch.cat([d2, side], dim=1))


def pat_unet():
    def feeds(model, rng):
        return OrderedDict(image=((natural_image(rng, 64, 64) - IMAGENET_MEAN) / IMAGENET_STD)[None].astype(np.float32))
    return UNet(), [("image", [1, 3, 64, 64], "float32")], ["masks"], feeds


# -- STFT log-mel front end -------------------------------------------------------------------------------------------

STFT = dict(samples=8000, rate=16000, n_fft=256, hop=128, mels=40, classes=12)


def mel_matrix(bins, mels, rate):
    """[bins, mels] HTK triangular mel filters."""
    def mel(f):
        return 2595.0 * np.log10(1.0 + f / 700.0)
    edges = 700.0 * (10 ** (np.linspace(mel(0.0), mel(rate / 2), mels + 2) / 2595.0) - 1.0)
    freqs = np.linspace(0, rate / 2, bins)[:, None]
    lo, mid, hi = edges[None, :-2], edges[None, 1:-1], edges[None, 2:]
    return np.maximum(0, np.minimum((freqs - lo) / (mid - lo), (hi - freqs) / (hi - mid))).astype(np.float32)


class ConvStftLogMel(nn.Module):
    """Waveform [1, 8000] in [-1, 1] -> log-mel [1, frames, 40] and keyword logits [1, 12].

    torch.stft has no ONNX export in torch 1.13 (aten::stft is unsupported at opset 17), so the STFT is written
    the way exportable front ends do: centre (reflect) padding and a strided Conv1d whose kernels are the
    Hann-windowed real and imaginary DFT bases."""

    def __init__(self, c=STFT):
        super().__init__()
        self.n_fft, self.hop = c["n_fft"], c["hop"]
        bins = c["n_fft"] // 2 + 1
        k = torch.arange(bins, dtype=torch.float64)[:, None]
        n = torch.arange(c["n_fft"], dtype=torch.float64)[None, :]
        angle = 2 * math.pi * k * n / c["n_fft"]
        window = torch.hann_window(c["n_fft"], periodic=True, dtype=torch.float64)
        basis = torch.cat([torch.cos(angle), -torch.sin(angle)]) * window
        self.register_buffer("dft", basis.float()[:, None, :])
        self.register_buffer("mel_fb", torch.from_numpy(mel_matrix(bins, c["mels"], c["rate"])))
        self.conv = nn.Conv1d(c["mels"], 64, 3, padding=1)
        self.fc = nn.Linear(64, c["classes"])

    def forward(self, wav):
        x = F.pad(wav[:, None, :], (self.n_fft // 2, self.n_fft // 2), mode="reflect")
        spec = F.conv1d(x, self.dft, stride=self.hop)
        real, imag = spec.chunk(2, dim=1)
        power = real * real + imag * imag
        mel = torch.matmul(power.transpose(1, 2), self.mel_fb)
        log_mel = torch.log(mel + 1e-6).clamp_min(math.log(1e-4))
        h = F.relu(self.conv(log_mel.transpose(1, 2)))
        return log_mel, self.fc(h.mean(dim=-1))


def pat_stft_logmel():
    c = STFT
    def feeds(model, rng):
        return OrderedDict(waveform=(speech_like(rng, c["samples"], c["rate"]) / 32768.0)[None].astype(np.float32))
    return ConvStftLogMel(), [("waveform", [1, c["samples"]], "float32")], ["log_mel", "logits"], feeds


# -- einsum attention with a bool padding mask ------------------------------------------------------------------------

EINSUM = dict(dim=128, heads=4, ffn=256, layers=2, seq=32)


class EinsumBlock(nn.Module):
    def __init__(self, c, heads_first):
        super().__init__()
        self.heads_first = heads_first
        self.heads, self.head_dim = c["heads"], c["dim"] // c["heads"]
        self.norm1 = nn.LayerNorm(c["dim"])
        self.qkv = nn.Linear(c["dim"], 3 * c["dim"])
        self.proj = nn.Linear(c["dim"], c["dim"])
        self.norm2 = nn.LayerNorm(c["dim"])
        self.fc1 = nn.Linear(c["dim"], c["ffn"])
        self.fc2 = nn.Linear(c["ffn"], c["dim"])

    def forward(self, x, mask):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, self.head_dim).unbind(2)
        if self.heads_first:
            q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
            scores = torch.einsum("bhqd,bhkd->bhqk", q, k)
        else:
            scores = torch.einsum("bqhd,bkhd->bhqk", q, k)
        scores = (scores * self.head_dim ** -0.5).masked_fill(~mask[:, None, None, :], float("-inf"))
        if self.heads_first:
            ctx = torch.einsum("bhqk,bhkd->bhqd", scores.softmax(dim=-1), v).transpose(1, 2).reshape(b, t, -1)
        else:
            ctx = torch.einsum("bhqk,bkhd->bqhd", scores.softmax(dim=-1), v).reshape(b, t, -1)
        x = x + self.proj(ctx)
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x)), approximate="tanh"))


class EinsumEncoder(nn.Module):
    """Hidden states [1, T, 128] and a bool key padding mask [1, T] (True = token) -> [1, T, 128]."""

    def __init__(self, c=EINSUM, heads_first=False):
        super().__init__()
        self.blocks = nn.ModuleList([EinsumBlock(c, heads_first) for _ in range(c["layers"])])

    def forward(self, hidden, mask):
        for block in self.blocks:
            hidden = block(hidden, mask)
        return hidden


def einsum_feeds(model, rng):
    c = EINSUM
    _, mask = token_batch(rng, 2, c["seq"])
    x = rng.normal(0, 1, (1, c["seq"], c["dim"])).astype(np.float32)
    return OrderedDict(hidden=x, mask=mask.astype(np.bool_))


def pat_einsum_attn(heads_first=False):
    c = EINSUM
    inputs = [("hidden", [1, c["seq"], c["dim"]], "float32"), ("mask", [1, c["seq"]], "bool")]
    return EinsumEncoder(heads_first=heads_first), inputs, ["encoded"], einsum_feeds


def pat_einsum_attn_bhqd():
    return pat_einsum_attn(heads_first=True)


# -- T5 relative position bias (Hugging Face's modeling_t5) -------------------------------------------------------

T5 = dict(vocab=512, dim=128, heads=4, ffn=256, layers=2, buckets=32, max_distance=128, seq=32)


class T5LayerNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(dim) + 0.5)
        self.eps = eps

    def forward(self, x):
        variance = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


def relative_position_bucket(relative_position, num_buckets, max_distance):
    """T5's bidirectional buckets: exact for small distances, log-spaced up to max_distance."""
    num_buckets //= 2
    buckets = (relative_position > 0).to(torch.long) * num_buckets
    relative_position = torch.abs(relative_position)
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    if_large = max_exact + (torch.log(relative_position.float() / max_exact) / math.log(max_distance / max_exact)
                            * (num_buckets - max_exact)).to(torch.long)
    if_large = torch.min(if_large, torch.full_like(if_large, num_buckets - 1))
    return buckets + torch.where(is_small, relative_position, if_large)


class T5Attention(nn.Module):
    def __init__(self, c, has_bias):
        super().__init__()
        self.c, self.heads, self.head_dim = c, c["heads"], c["dim"] // c["heads"]
        self.q, self.k, self.v, self.o = (nn.Linear(c["dim"], c["dim"], bias=False) for _ in range(4))
        if has_bias:
            self.relative_attention_bias = nn.Embedding(c["buckets"], c["heads"])

    def compute_bias(self, query_length, key_length):
        context_position = torch.arange(query_length, dtype=torch.long)[:, None]
        memory_position = torch.arange(key_length, dtype=torch.long)[None, :]
        bucket = relative_position_bucket(memory_position - context_position, self.c["buckets"],
                                          self.c["max_distance"])
        return self.relative_attention_bias(bucket).permute([2, 0, 1]).unsqueeze(0)

    def forward(self, x, mask, position_bias=None):
        b, t, _ = x.shape
        def shape(s):
            return s.view(b, -1, self.heads, self.head_dim).transpose(1, 2)
        q, k, v = shape(self.q(x)), shape(self.k(x)), shape(self.v(x))
        scores = torch.matmul(q, k.transpose(3, 2))  # T5 does not scale the scores
        if position_bias is None:
            position_bias = self.compute_bias(t, t) + mask
        w = torch.softmax((scores + position_bias).float(), dim=-1).type_as(scores)
        out = torch.matmul(w, v).transpose(1, 2).contiguous().view(b, -1, self.heads * self.head_dim)
        return self.o(out), position_bias


class T5Layer(nn.Module):
    def __init__(self, c, has_bias):
        super().__init__()
        self.attn_norm = T5LayerNorm(c["dim"])
        self.attn = T5Attention(c, has_bias)
        self.ff_norm = T5LayerNorm(c["dim"])
        self.wi = nn.Linear(c["dim"], c["ffn"], bias=False)
        self.wo = nn.Linear(c["ffn"], c["dim"], bias=False)

    def forward(self, x, mask, position_bias):
        a, position_bias = self.attn(self.attn_norm(x), mask, position_bias)
        x = x + a
        return x + self.wo(F.relu(self.wi(self.ff_norm(x)))), position_bias


class T5Encoder(nn.Module):
    """input_ids, attention_mask [1, T] (int64) -> encoder states [1, T, 128]; the first layer computes the
    position bias (plus the finfo.min padding mask) and the others reuse it."""

    def __init__(self, c=T5):
        super().__init__()
        self.embed_tokens = nn.Embedding(c["vocab"], c["dim"])
        self.layers = nn.ModuleList([T5Layer(c, has_bias=(i == 0)) for i in range(c["layers"])])
        self.final_layer_norm = T5LayerNorm(c["dim"])

    def forward(self, input_ids, attention_mask):
        mask = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * FLOAT_MIN
        x, position_bias = self.embed_tokens(input_ids), None
        for layer in self.layers:
            x, position_bias = layer(x, mask, position_bias)
        return self.final_layer_norm(x)


def pat_t5_relbias():
    c = T5
    def feeds(model, rng):
        ids, mask = token_batch(rng, c["vocab"], c["seq"])
        return OrderedDict(input_ids=ids, attention_mask=mask)
    inputs = [("input_ids", [1, c["seq"]], "int64"), ("attention_mask", [1, c["seq"]], "int64")]
    return T5Encoder(), inputs, ["encoder_states"], feeds


# -- MobileViT (Hugging Face's modeling_mobilevit) ----------------------------------------------------------------

def conv_bn(cin, cout, k=3, stride=1, groups=1, act=True):
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    return nn.Sequential(*layers, nn.SiLU()) if act else nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand=2):
        super().__init__()
        mid = cin * expand
        self.residual = stride == 1 and cin == cout
        self.block = nn.Sequential(conv_bn(cin, mid, 1), conv_bn(mid, mid, 3, stride, groups=mid),
                                   conv_bn(mid, cout, 1, act=False))

    def forward(self, x):
        return x + self.block(x) if self.residual else self.block(x)


class MobileViTTransformerLayer(nn.Module):
    def __init__(self, dim, heads, ffn):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.norm1 = nn.LayerNorm(dim)
        self.query, self.key, self.value = (nn.Linear(dim, dim) for _ in range(3))
        self.out = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1, self.fc2 = nn.Linear(dim, ffn), nn.Linear(ffn, dim)

    def forward(self, x):
        h = self.norm1(x)
        def split(s):
            return s.view(s.size()[:-1] + (self.heads, self.head_dim)).permute(0, 2, 1, 3)
        q, k, v = split(self.query(h)), split(self.key(h)), split(self.value(h))
        w = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim), dim=-1)
        ctx = torch.matmul(w, v).permute(0, 2, 1, 3).contiguous()
        x = x + self.out(ctx.view(ctx.size()[:-2] + (self.heads * self.head_dim,)))
        return x + self.fc2(F.silu(self.fc1(self.norm2(x))))


class MobileViTBlock(nn.Module):
    """Local 3x3 convolution, unfolding into 2x2 patches (sequences of patch positions), a transformer, folding
    back, projection and fusion with the block's input."""

    def __init__(self, channels, dim=64, heads=4, ffn=128, layers=2, patch=2):
        super().__init__()
        self.patch = patch
        self.conv_kxk = conv_bn(channels, channels, 3)
        self.conv_1x1 = nn.Conv2d(channels, dim, 1, bias=False)
        self.transformer = nn.ModuleList([MobileViTTransformerLayer(dim, heads, ffn) for _ in range(layers)])
        self.layernorm = nn.LayerNorm(dim)
        self.conv_projection = conv_bn(dim, channels, 1)
        self.fusion = conv_bn(2 * channels, channels, 3)

    def unfolding(self, features):
        ph = pw = self.patch
        batch, channels, h, w = features.shape
        nph, npw = h // ph, w // pw
        features = features.reshape(batch * channels * nph, ph, npw, pw).transpose(1, 2)
        features = features.reshape(batch, channels, nph * npw, ph * pw).transpose(1, 3)
        return features.reshape(batch * ph * pw, nph * npw, -1), (batch, channels, nph, npw)

    def folding(self, patches, info):
        ph = pw = self.patch
        batch, channels, nph, npw = info
        features = patches.contiguous().view(batch, ph * pw, nph * npw, -1).transpose(1, 3)
        features = features.reshape(batch * channels * nph, npw, ph, pw).transpose(1, 2)
        return features.reshape(batch, channels, nph * ph, npw * pw)

    def forward(self, x):
        features = self.conv_1x1(self.conv_kxk(x))
        patches, info = self.unfolding(features)
        for layer in self.transformer:
            patches = layer(patches)
        features = self.conv_projection(self.folding(self.layernorm(patches), info))
        return self.fusion(torch.cat((x, features), dim=1))


class MobileViT(nn.Module):
    """Image [1, 3, 64, 64] -> logits [1, 10]."""

    def __init__(self, classes=10):
        super().__init__()
        self.stem = conv_bn(3, 16, 3, 2)
        self.mv2 = InvertedResidual(16, 32, 2)
        self.vit = MobileViTBlock(32)
        self.conv_1x1_exp = conv_bn(32, 128, 1)
        self.classifier = nn.Linear(128, classes)

    def forward(self, x):
        x = self.conv_1x1_exp(self.vit(self.mv2(self.stem(x))))
        return self.classifier(x.mean(dim=(2, 3)))


def pat_mobilevit():
    def feeds(model, rng):
        return OrderedDict(image=((natural_image(rng, 64, 64) - IMAGENET_MEAN) / IMAGENET_STD)[None].astype(np.float32))
    return MobileViT(), [("image", [1, 3, 64, 64], "float32")], ["logits"], feeds


# -- classifier heads with integer outputs ------------------------------------------------------------------------

class TopKClassifier(nn.Module):
    """Image [1, 3, 32, 32] -> logits [1, 10], the argmax class [1] and the 5 best probabilities with their
    classes [1, 5]: post-processing exported into the graph."""

    def __init__(self, classes=10, k=5):
        super().__init__()
        self.k = k
        self.features = nn.Sequential(conv_bn(3, 16, 3, 2), conv_bn(16, 32, 3, 2), conv_bn(32, 64, 3, 2))
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        logits = self.fc(self.features(x).mean(dim=(2, 3)))
        scores, classes = torch.softmax(logits, dim=-1).topk(self.k, dim=-1)
        return logits, logits.argmax(dim=-1), scores, classes


def pat_topk_classifier():
    def feeds(model, rng):
        return OrderedDict(image=((natural_image(rng, 32, 32) - IMAGENET_MEAN) / IMAGENET_STD)[None].astype(np.float32))
    return TopKClassifier(), [("image", [1, 3, 32, 32], "float32")], ["logits", "label", "top_scores", "top_labels"], \
        feeds


# -- padded embedding and masked mean pooling (sentence-transformers) ---------------------------------------------

POOL = dict(vocab=1000, dim=64, seq=32)


class MeanPoolEmbedder(nn.Module):
    """input_ids, attention_mask [1, T] (int64, right padding with id 0) -> an L2-normalised sentence
    embedding [1, 64]."""

    def __init__(self, c=POOL):
        super().__init__()
        self.embed = nn.Embedding(c["vocab"], c["dim"], padding_idx=0)
        self.dense = nn.Linear(c["dim"], c["dim"])

    def forward(self, input_ids, attention_mask):
        x = self.embed(input_ids)
        m = attention_mask.unsqueeze(-1).expand(x.size()).float()
        pooled = torch.sum(x * m, 1) / torch.clamp(m.sum(1), min=1e-9)
        return F.normalize(torch.tanh(self.dense(pooled)), p=2, dim=1)


def pat_embed_meanpool():
    c = POOL
    def feeds(model, rng):
        ids, mask = token_batch(rng, c["vocab"], c["seq"])
        return OrderedDict(input_ids=ids, attention_mask=mask)
    inputs = [("input_ids", [1, c["seq"]], "int64"), ("attention_mask", [1, c["seq"]], "int64")]
    return MeanPoolEmbedder(), inputs, ["embedding"], feeds


# name -> (builder, family, transformer family)
MODELS = OrderedDict([
    ("pat_gpt2", (pat_gpt2, "llm", True)),
    ("pat_gpt2_leftpad", (pat_gpt2_leftpad, "llm", True)),
    ("pat_lstm_kws", (pat_lstm_kws, "audio", False)),
    ("pat_gru_stream", (pat_gru_stream, "audio", False)),
    ("pat_unet", (pat_unet, "segmentation", False)),
    ("pat_stft_logmel", (pat_stft_logmel, "audio", False)),
    ("pat_einsum_attn", (pat_einsum_attn, "nlp", True)),
    ("pat_einsum_attn_bhqd", (pat_einsum_attn_bhqd, "nlp", True)),
    ("pat_t5_relbias", (pat_t5_relbias, "nlp", True)),
    ("pat_mobilevit", (pat_mobilevit, "vision-transformer", True)),
    ("pat_topk_classifier", (pat_topk_classifier, "cnn", False)),
    ("pat_embed_meanpool", (pat_embed_meanpool, "nlp", False)),
])
