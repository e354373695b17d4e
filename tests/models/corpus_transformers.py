"""Hand-written torch modules of the model corpus (tests/models/corpus.py): the
transformer and audio families users export today, written the way their
reference implementations are (Hugging Face Llama/BERT, OpenAI Whisper,
torchaudio's Conformer), at small sizes.

Hidden sizes are multiples of 64 so that the W4 LPBQ recipe (64-wide blocks
along the input dimension) applies to every projection.
"""
import math
from collections import OrderedDict

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

# -- Llama-style decoder ----------------------------------------------------------------------------------------

LLAMA = dict(vocab=256, dim=128, layers=2, heads=4, kv_heads=2, ffn=256, max_pos=64)
LLAMA_SEQ = 16        # prompt length of the model without a KV cache
LLAMA_PAST = 15       # cached positions of the decode-step model
LLAMA_NEW = 1         # new tokens of the decode-step model
# The additive mask value on-device LLM exports use instead of finfo.min: the
# masked scores then keep a 16-bit activation grid that still resolves the
# unmasked ones.
MASK_VALUE = -100.0


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class LlamaAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads, self.kv_heads = c["heads"], c["kv_heads"]
        self.head_dim = c["dim"] // c["heads"]
        self.q_proj = nn.Linear(c["dim"], self.heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(c["dim"], self.kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(c["dim"], self.kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(self.heads * self.head_dim, c["dim"], bias=False)

    def forward(self, x, cos, sin, mask, past_k=None, past_v=None):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if past_k is not None:
            k = torch.cat([past_k, k], dim=2)
            v = torch.cat([past_v, v], dim=2)
        present = (k, v)
        rep = self.heads // self.kv_heads
        k = torch.repeat_interleave(k, rep, dim=1)
        v = torch.repeat_interleave(v, rep, dim=1)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim) + mask
        out = torch.matmul(torch.softmax(scores, dim=-1), v)
        return self.o_proj(out.transpose(1, 2).reshape(b, t, self.heads * self.head_dim)), present


class LlamaMLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.gate_proj = nn.Linear(c["dim"], c["ffn"], bias=False)
        self.up_proj = nn.Linear(c["dim"], c["ffn"], bias=False)
        self.down_proj = nn.Linear(c["ffn"], c["dim"], bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.input_layernorm = RMSNorm(c["dim"])
        self.self_attn = LlamaAttention(c)
        self.post_attention_layernorm = RMSNorm(c["dim"])
        self.mlp = LlamaMLP(c)

    def forward(self, x, cos, sin, mask, past_k=None, past_v=None):
        a, present = self.self_attn(self.input_layernorm(x), cos, sin, mask, past_k, past_v)
        x = x + a
        return x + self.mlp(self.post_attention_layernorm(x)), present


class LlamaDecoder(nn.Module):
    """Token ids [1, T] (int64) -> logits [1, T, vocab]; with a KV cache, also past keys/values
    [1, kv_heads, P, head_dim] per layer in, present keys/values [1, kv_heads, P + T, head_dim] out."""

    def __init__(self, c=LLAMA, kv_cache=False):
        super().__init__()
        self.kv_cache = kv_cache
        self.embed_tokens = nn.Embedding(c["vocab"], c["dim"])
        self.layers = nn.ModuleList([LlamaLayer(c) for _ in range(c["layers"])])
        self.norm = RMSNorm(c["dim"])
        self.lm_head = nn.Linear(c["dim"], c["vocab"], bias=False)
        head_dim = c["dim"] // c["heads"]
        inv_freq = 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim))
        freqs = torch.outer(torch.arange(c["max_pos"]).float(), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos(), persistent=False)
        self.register_buffer("sin_cached", emb.sin(), persistent=False)

    def forward(self, input_ids, *past):
        t = input_ids.shape[1]
        past_len = past[0].shape[2] if past else 0
        # Positions and the causal mask are built in the graph, as Hugging Face's Llama does.
        pos = torch.arange(past_len, past_len + t, device=input_ids.device)
        cos = self.cos_cached[pos][None, None]
        sin = self.sin_cached[pos][None, None]
        key_pos = torch.arange(past_len + t, device=input_ids.device)
        causal = key_pos[None, :] > pos[:, None]
        mask = torch.where(causal, torch.tensor(MASK_VALUE), torch.tensor(0.0))[None, None]
        x = self.embed_tokens(input_ids)
        presents = []
        for i, layer in enumerate(self.layers):
            pk, pv = (past[2 * i], past[2 * i + 1]) if past else (None, None)
            x, (k, v) = layer(x, cos, sin, mask, pk, pv)
            presents += [k, v]
        logits = self.lm_head(self.norm(x))
        return (logits, *presents) if self.kv_cache else logits


def _init_llama(model, gen):
    # RMSNorm weights away from 1 so the norm's scale is not an identity the converter could ignore.
    for m in model.modules():
        if isinstance(m, RMSNorm):
            m.weight.data.copy_(torch.rand(m.weight.shape, generator=gen) + 0.5)
    return model


def llama():
    c = LLAMA
    def feeds(model, rng):
        return OrderedDict(input_ids=rng.integers(1, c["vocab"], size=(1, LLAMA_SEQ)).astype(np.int64))
    return _init_llama(LlamaDecoder(c), None), [("input_ids", [1, LLAMA_SEQ], "int64")], ["logits"], feeds


def llama_kv():
    c = LLAMA
    head_dim = c["dim"] // c["heads"]
    inputs = [("input_ids", [1, LLAMA_NEW], "int64")]
    outputs = ["logits"]
    for i in range(c["layers"]):
        inputs += [("past_key_%d" % i, [1, c["kv_heads"], LLAMA_PAST, head_dim], "float32"),
                   ("past_value_%d" % i, [1, c["kv_heads"], LLAMA_PAST, head_dim], "float32")]
        outputs += ["present_key_%d" % i, "present_value_%d" % i]
    return _init_llama(LlamaDecoder(c, kv_cache=True), None), inputs, outputs, llama_kv_feeds


def llama_kv_feeds(model, rng):
    """A decode step after a real prompt: the cache is what the same model computes for LLAMA_PAST tokens."""
    c = LLAMA
    prompt = torch.from_numpy(rng.integers(1, c["vocab"], size=(1, LLAMA_PAST + LLAMA_NEW)))
    head_dim = c["dim"] // c["heads"]
    empty = [torch.zeros(1, c["kv_heads"], 0, head_dim) for _ in range(2 * c["layers"])]
    with torch.no_grad():
        out = model(prompt[:, :LLAMA_PAST], *empty)
    feeds = OrderedDict(input_ids=prompt[:, LLAMA_PAST:].numpy())
    for i in range(c["layers"]):
        feeds["past_key_%d" % i] = out[1 + 2 * i].numpy()
        feeds["past_value_%d" % i] = out[2 + 2 * i].numpy()
    return feeds


# -- BERT-style encoder -----------------------------------------------------------------------------------------

BERT = dict(vocab=512, dim=128, layers=2, heads=4, ffn=256, max_pos=64, types=2)
BERT_SEQ = 32


class BertLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads, self.head_dim = c["heads"], c["dim"] // c["heads"]
        self.query = nn.Linear(c["dim"], c["dim"])
        self.key = nn.Linear(c["dim"], c["dim"])
        self.value = nn.Linear(c["dim"], c["dim"])
        self.attn_out = nn.Linear(c["dim"], c["dim"])
        self.attn_norm = nn.LayerNorm(c["dim"], eps=1e-12)
        self.intermediate = nn.Linear(c["dim"], c["ffn"])
        self.output = nn.Linear(c["ffn"], c["dim"])
        self.out_norm = nn.LayerNorm(c["dim"], eps=1e-12)

    def split(self, x):
        b, t, _ = x.shape
        return x.view(b, t, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, ext_mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + ext_mask
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v).permute(0, 2, 1, 3).flatten(2)
        x = self.attn_norm(x + self.attn_out(ctx))
        return self.out_norm(x + self.output(F.gelu(self.intermediate(x))))


class BertEncoder(nn.Module):
    """input_ids, token_type_ids, attention_mask [1, T] (int64) -> last hidden state, pooled [CLS]."""

    def __init__(self, c=BERT):
        super().__init__()
        self.word_embeddings = nn.Embedding(c["vocab"], c["dim"])
        self.position_embeddings = nn.Embedding(c["max_pos"], c["dim"])
        self.token_type_embeddings = nn.Embedding(c["types"], c["dim"])
        self.emb_norm = nn.LayerNorm(c["dim"], eps=1e-12)
        self.layers = nn.ModuleList([BertLayer(c) for _ in range(c["layers"])])
        self.pooler = nn.Linear(c["dim"], c["dim"])

    def forward(self, input_ids, token_type_ids, attention_mask):
        pos = torch.arange(input_ids.shape[1], device=input_ids.device)[None]
        x = self.word_embeddings(input_ids) + self.position_embeddings(pos) + self.token_type_embeddings(token_type_ids)
        x = self.emb_norm(x)
        # BERT's extended attention mask: 0 where attended, -10000 on padding.
        ext = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
        for layer in self.layers:
            x = layer(x, ext)
        return x, torch.tanh(self.pooler(x[:, 0]))


def bert():
    ids = [(n, [1, BERT_SEQ], "int64") for n in ("input_ids", "token_type_ids", "attention_mask")]
    return BertEncoder(), ids, ["last_hidden_state", "pooled"], bert_feeds


def bert_feeds(model, rng):
    """[CLS] A [SEP] B [SEP] then padding, the way a tokenizer fills a fixed-length batch."""
    t = BERT_SEQ
    n = int(rng.integers(t // 2, t + 1))
    ids = np.zeros((1, t), np.int64)
    ids[0, :n] = rng.integers(5, BERT["vocab"], size=n)
    a = int(rng.integers(2, n - 2))
    ids[0, 0], ids[0, a], ids[0, n - 1] = 1, 2, 2
    types = np.zeros((1, t), np.int64)
    types[0, a + 1:n] = 1
    mask = np.zeros((1, t), np.int64)
    mask[0, :n] = 1
    return OrderedDict(input_ids=ids, token_type_ids=types, attention_mask=mask)


# -- Whisper-style audio encoder ----------------------------------------------------------------------------------

WHISPER = dict(mels=40, frames=200, dim=128, heads=4, layers=2, ffn=256)


def sinusoids(length, channels, max_timescale=10000):
    inc = math.log(max_timescale) / (channels // 2 - 1)
    inv = torch.exp(-inc * torch.arange(channels // 2))
    t = torch.arange(length)[:, None] * inv[None, :]
    return torch.cat([torch.sin(t), torch.cos(t)], dim=1)


class WhisperBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attn_ln = nn.LayerNorm(c["dim"])
        self.attn = WhisperAttention(c)
        self.mlp_ln = nn.LayerNorm(c["dim"])
        self.mlp = nn.Sequential(nn.Linear(c["dim"], c["ffn"]), nn.GELU(), nn.Linear(c["ffn"], c["dim"]))

    def forward(self, x):
        x = x + self.attn(self.attn_ln(x))
        return x + self.mlp(self.mlp_ln(x))


class WhisperAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads = c["heads"]
        self.query = nn.Linear(c["dim"], c["dim"])
        self.key = nn.Linear(c["dim"], c["dim"], bias=False)
        self.value = nn.Linear(c["dim"], c["dim"])
        self.out = nn.Linear(c["dim"], c["dim"])

    def forward(self, x):
        b, t, d = x.shape
        scale = (d // self.heads) ** -0.25  # Whisper scales q and k each by d^-1/4
        q = self.query(x).view(b, t, self.heads, -1).permute(0, 2, 1, 3) * scale
        k = self.key(x).view(b, t, self.heads, -1).permute(0, 2, 3, 1) * scale
        v = self.value(x).view(b, t, self.heads, -1).permute(0, 2, 1, 3)
        w = torch.softmax(q @ k, dim=-1)
        return self.out((w @ v).permute(0, 2, 1, 3).flatten(start_dim=2))


class WhisperEncoder(nn.Module):
    """Log-mel features [1, mels, frames] -> encoder states [1, frames / 2, dim]."""

    def __init__(self, c=WHISPER):
        super().__init__()
        self.conv1 = nn.Conv1d(c["mels"], c["dim"], kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(c["dim"], c["dim"], kernel_size=3, stride=2, padding=1)
        self.register_buffer("positional_embedding", sinusoids(c["frames"] // 2, c["dim"]))
        self.blocks = nn.ModuleList([WhisperBlock(c) for _ in range(c["layers"])])
        self.ln_post = nn.LayerNorm(c["dim"])

    def forward(self, mel):
        x = F.gelu(self.conv1(mel))
        x = F.gelu(self.conv2(x)).permute(0, 2, 1)
        x = x + self.positional_embedding
        for block in self.blocks:
            x = block(x)
        return self.ln_post(x)


def whisper_encoder():
    c = WHISPER
    return WhisperEncoder(), [("mel", [1, c["mels"], c["frames"]], "float32")], ["encoder_states"], whisper_feeds


def whisper_feeds(model, rng):
    """Whisper's normalised log-mel: log10 power clamped 8 below its max, then (x + 4) / 4; a few
    formant-like bands that drift over time on a noise floor."""
    c = WHISPER
    f = np.arange(c["mels"])[:, None]
    t = np.arange(c["frames"])[None, :]
    level = np.full((c["mels"], c["frames"]), -6.0)
    for _ in range(4):
        centre = rng.uniform(3, c["mels"] - 3) + 3 * np.sin(t / rng.uniform(10, 40) + rng.uniform(0, 6))
        level = np.maximum(level, rng.uniform(-2, 0.5) - 0.15 * (f - centre) ** 2)
    level += rng.normal(0, 0.3, level.shape)
    level = np.maximum(level, level.max() - 8.0)
    return OrderedDict(mel=((level + 4.0) / 4.0)[None].astype(np.float32))


# -- Conformer block ----------------------------------------------------------------------------------------------

CONFORMER = dict(dim=128, heads=4, ffn=256, kernel=15, frames=64)


class FeedForward(nn.Module):
    def __init__(self, dim, ffn):
        super().__init__()
        self.net = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, ffn), nn.SiLU(), nn.Linear(ffn, dim))

    def forward(self, x):
        return self.net(x)


class ConvModule(nn.Module):
    def __init__(self, dim, kernel):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.pointwise1 = nn.Conv1d(dim, 2 * dim, 1)
        self.depthwise = nn.Conv1d(dim, dim, kernel, padding=kernel // 2, groups=dim)
        self.batch_norm = nn.BatchNorm1d(dim)
        self.pointwise2 = nn.Conv1d(dim, dim, 1)

    def forward(self, x):
        y = self.norm(x).transpose(1, 2)
        y = F.glu(self.pointwise1(y), dim=1)
        y = F.silu(self.batch_norm(self.depthwise(y)))
        return self.pointwise2(y).transpose(1, 2)


class ConformerBlock(nn.Module):
    """Features [1, T, dim] -> [1, T, dim]: half-step FFN, MHSA, convolution module, half-step FFN, LayerNorm."""

    def __init__(self, c=CONFORMER):
        super().__init__()
        self.ffn1 = FeedForward(c["dim"], c["ffn"])
        self.attn_norm = nn.LayerNorm(c["dim"])
        # Sequence-first: keeps nn.MultiheadAttention off its fused inference path, which has no ONNX export.
        self.attn = nn.MultiheadAttention(c["dim"], c["heads"])
        self.conv = ConvModule(c["dim"], c["kernel"])
        self.ffn2 = FeedForward(c["dim"], c["ffn"])
        self.final_norm = nn.LayerNorm(c["dim"])

    def forward(self, x):
        x = x + 0.5 * self.ffn1(x)
        y = self.attn_norm(x).transpose(0, 1)
        x = x + self.attn(y, y, y, need_weights=False)[0].transpose(0, 1)
        x = x + self.conv(x)
        x = x + 0.5 * self.ffn2(x)
        return self.final_norm(x)


def conformer():
    c = CONFORMER
    def feeds(model, rng):
        # Subsampled acoustic embeddings: unit-scale, correlated over neighbouring frames.
        x = rng.normal(0, 1, (1, c["frames"] + 2, c["dim"]))
        return OrderedDict(features=((x[:, :-2] + x[:, 1:-1] + x[:, 2:]) / np.sqrt(3)).astype(np.float32))
    return ConformerBlock(), [("features", [1, c["frames"], c["dim"]], "float32")], ["encoded"], feeds


# name -> (builder, family); all are transformer families.
MODELS = OrderedDict([
    ("llama", (llama, "llm")),
    ("llama_kv", (llama_kv, "llm")),
    ("bert", (bert, "nlp")),
    ("whisper_encoder", (whisper_encoder, "audio")),
    ("conformer", (conformer, "audio")),
])
