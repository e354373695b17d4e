"""torchvision architectures of the model corpus (tests/models/corpus.py).

Each builder returns a torch module in eval mode with random weights. Widths
and depths are reduced through the constructors where torchvision allows it
(the layer structure, and so the exported op pattern, stays the architecture's
own); elsewhere the input resolution is what keeps the model cheap to run.
"""
from collections import OrderedDict

import numpy as np
import torch
import torchvision
from torch import nn
from torchvision.models import convnext, densenet, efficientnet, mobilenetv3, resnet, swin_transformer
from torchvision.models import vision_transformer, video
from torchvision.models.detection import backbone_utils, retinanet, ssdlite
from torchvision.models.segmentation import deeplabv3, fcn, lraspp
from torchvision.ops import feature_pyramid_network

NUM_CLASSES = 10

IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], np.float32)[:, None, None]
IMAGENET_STD = np.array([0.229, 0.224, 0.225], np.float32)[:, None, None]


def natural_image(rng, h, w):
    """[3, h, w] in [0, 1]: smooth colour regions, a lighting gradient, a few edges and sensor noise."""
    def smooth(cells_h, cells_w):
        coarse = rng.uniform(0, 1, (3, cells_h + 1, cells_w + 1))
        ys = np.linspace(0, cells_h, h)
        xs = np.linspace(0, cells_w, w)
        y0, x0 = np.floor(ys).astype(int).clip(0, cells_h - 1), np.floor(xs).astype(int).clip(0, cells_w - 1)
        fy, fx = (ys - y0)[None, :, None], (xs - x0)[None, None, :]
        a = coarse[:, y0][:, :, x0]
        b = coarse[:, y0][:, :, x0 + 1]
        c = coarse[:, y0 + 1][:, :, x0]
        d = coarse[:, y0 + 1][:, :, x0 + 1]
        return (a * (1 - fx) + b * fx) * (1 - fy) + (c * (1 - fx) + d * fx) * fy

    img = 0.6 * smooth(3, 3) + 0.3 * smooth(12, 12)
    yy, xx = np.mgrid[0:h, 0:w] / max(h, w)
    img += 0.2 * (rng.uniform(-1, 1) * yy + rng.uniform(-1, 1) * xx)[None]
    for _ in range(3):  # a few hard-edged objects
        cy, cx, r = rng.uniform(0, 1), rng.uniform(0, 1), rng.uniform(0.1, 0.3)
        inside = ((yy - cy) ** 2 + (xx - cx) ** 2) < r * r
        img = np.where(inside[None], rng.uniform(0, 1, (3, 1, 1)), img)
    img += rng.normal(0, 0.02, img.shape)
    return np.clip(img, 0, 1).astype(np.float32)


def vision_feeds(inputs):
    """torchvision's preprocessing: an image in [0, 1] normalised with ImageNet's mean and std."""
    def feeds(model, rng):
        out = OrderedDict()
        for name, shape, _ in inputs:
            if name == "clip":  # [1, 3, T, H, W]: a slowly panning scene
                _, _, t, h, w = shape
                scene = natural_image(rng, h, w + 2 * t)
                frames = [(scene[:, :, 2 * k:2 * k + w] - IMAGENET_MEAN) / IMAGENET_STD for k in range(t)]
                out[name] = np.stack(frames, axis=1)[None].astype(np.float32)
            else:
                _, _, h, w = shape
                out[name] = ((natural_image(rng, h, w) - IMAGENET_MEAN) / IMAGENET_STD)[None].astype(np.float32)
        return out
    return feeds


def randomize_norms(module, gen):
    """Gives every BatchNorm/LayerNorm non-trivial statistics and affine parameters.

    Fresh torchvision norms are identities (mean 0, var 1, weight 1, bias 0); a
    converter that folds them wrongly would then still look right."""
    with torch.no_grad():
        _randomize_norms(module, gen)
    return module


def _randomize_norms(module, gen):
    for m in module.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)):
            m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(m.running_var.shape, generator=gen) + 0.5)
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.LayerNorm)) and m.weight is not None:
            m.weight.copy_(torch.rand(m.weight.shape, generator=gen) + 0.5)
            m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.1)


def image(shape):
    return [("image", shape, "float32")]


# -- classification ------------------------------------------------------------------------------------------

def resnet18():
    return torchvision.models.resnet18(num_classes=NUM_CLASSES), image([1, 3, 64, 64]), ["logits"]


def mobilenet_v2():
    return torchvision.models.mobilenet_v2(num_classes=NUM_CLASSES, width_mult=0.5), image([1, 3, 64, 64]), ["logits"]


def mobilenet_v3_small():
    return torchvision.models.mobilenet_v3_small(num_classes=NUM_CLASSES), image([1, 3, 64, 64]), ["logits"]


def efficientnet_b0():
    # B0's own stage layout at half width and depth: MBConv, SiLU, squeeze-excitation all stay.
    setting, last = efficientnet._efficientnet_conf("efficientnet_b0", width_mult=0.5, depth_mult=0.5)
    return efficientnet.EfficientNet(setting, 0.2, num_classes=NUM_CLASSES, last_channel=last), \
        image([1, 3, 64, 64]), ["logits"]


def regnet_x_400mf():
    return torchvision.models.regnet_x_400mf(num_classes=NUM_CLASSES), image([1, 3, 64, 64]), ["logits"]


def convnext_tiny():
    # ConvNeXt-T's block (7x7 depthwise, LayerNorm2d, inverted MLP, layer scale) with narrow stages.
    cfg = convnext.CNBlockConfig
    setting = [cfg(24, 48, 2), cfg(48, 96, 2), cfg(96, 192, 3), cfg(192, None, 2)]
    return convnext.ConvNeXt(setting, stochastic_depth_prob=0.0, num_classes=NUM_CLASSES), \
        image([1, 3, 64, 64]), ["logits"]


def densenet121():
    # DenseNet-121's block configuration (6, 12, 24, 16), with a narrower growth rate.
    return densenet.DenseNet(growth_rate=12, block_config=(6, 12, 24, 16), num_init_features=24,
                             num_classes=NUM_CLASSES), image([1, 3, 64, 64]), ["logits"]


def googlenet():
    return torchvision.models.googlenet(num_classes=NUM_CLASSES, aux_logits=False, init_weights=True,
                                        transform_input=False), image([1, 3, 64, 64]), ["logits"]


def shufflenet_v2():
    return torchvision.models.shufflenet_v2_x0_5(num_classes=NUM_CLASSES), image([1, 3, 64, 64]), ["logits"]


def squeezenet1_0():
    return torchvision.models.squeezenet1_0(num_classes=NUM_CLASSES), image([1, 3, 64, 64]), ["logits"]


def mnasnet0_5():
    return torchvision.models.mnasnet0_5(num_classes=NUM_CLASSES), image([1, 3, 64, 64]), ["logits"]


def vit_b_16():
    # ViT-B/16's patch size and encoder with 2 layers at width 128: 16 patches + class token.
    m = vision_transformer.VisionTransformer(image_size=64, patch_size=16, num_layers=2, num_heads=4, hidden_dim=128,
                                             mlp_dim=256, num_classes=NUM_CLASSES)
    m.heads.head.reset_parameters()  # torchvision zero-initialises the head: every logit would be 0
    return m, image([1, 3, 64, 64]), ["logits"]


def swin_t():
    # Swin-T's layout (4 stages, 2 blocks each, shifted windows, patch merging) at embed_dim 32. A 4x4
    # window on a 64x64 image keeps every stage windowed, the last one (2x2) padded and unshifted.
    return swin_transformer.SwinTransformer(patch_size=[4, 4], embed_dim=32, depths=[2, 2, 2, 2],
                                            num_heads=[2, 4, 8, 16], window_size=[4, 4], stochastic_depth_prob=0.0,
                                            num_classes=NUM_CLASSES), image([1, 3, 64, 64]), ["logits"]


# -- segmentation, video, detection ----------------------------------------------------------------------------

class SegmentationOut(nn.Module):
    """torchvision's segmentation models return {"out": ...}: export the tensor."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def lraspp_mobilenet_v3_large():
    backbone = mobilenetv3.mobilenet_v3_large(dilated=True, width_mult=0.5)
    return SegmentationOut(lraspp._lraspp_mobilenetv3(backbone, 4)), image([1, 3, 96, 96]), ["masks"]


def deeplabv3_mobilenet_v3_large():
    backbone = mobilenetv3.mobilenet_v3_large(dilated=True, width_mult=0.5)
    return SegmentationOut(deeplabv3._deeplabv3_mobilenetv3(backbone, 4, aux=False)), \
        image([1, 3, 96, 96]), ["masks"]


def fcn_resnet18():
    # FCN's head on a ResNet-18 trunk (torchvision's FCN builders only offer ResNet-50/101).
    trunk = resnet.resnet18()
    backbone = torchvision.models._utils.IntermediateLayerGetter(trunk, return_layers={"layer4": "out"})
    return SegmentationOut(fcn.FCN(backbone, fcn.FCNHead(512, 4))), image([1, 3, 96, 96]), ["masks"]


def r3d_18():
    # A tiny clip: 4 frames of 32x32.
    return video.r3d_18(num_classes=NUM_CLASSES), [("clip", [1, 3, 4, 32, 32], "float32")], ["logits"]


class RetinaNetRaw(nn.Module):
    """ResNet-18 + FPN (P3-P7) backbone and RetinaNet's heads; the raw head tensors, no anchor decoding or NMS."""

    def __init__(self):
        super().__init__()
        trunk = resnet.resnet18()
        self.backbone = backbone_utils.BackboneWithFPN(
            trunk, return_layers={"layer2": "0", "layer3": "1", "layer4": "2"}, in_channels_list=[128, 256, 512],
            out_channels=64, extra_blocks=feature_pyramid_network.LastLevelP6P7(64, 64))
        self.head = retinanet.RetinaNetHead(64, num_anchors=9, num_classes=5)
        # RetinaNet's heads start at std 0.01 around the focal-loss prior: outputs that barely vary. PyTorch's
        # default init gives a trained head's spread.
        for m in self.head.modules():
            if isinstance(m, nn.Conv2d):
                m.reset_parameters()

    def forward(self, x):
        feats = list(self.backbone(x).values())
        out = self.head(feats)
        return out["cls_logits"], out["bbox_regression"]


def retinanet_fpn():
    return RetinaNetRaw(), image([1, 3, 128, 128]), ["cls_logits", "bbox_regression"]


class SsdLiteRaw(nn.Module):
    """SSDLite320's MobileNetV3 backbone (with its extra layers) and its heads, raw outputs."""

    def __init__(self):
        super().__init__()
        m = ssdlite.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=5,
                                                  width_mult=0.5)
        self.backbone, self.head = m.backbone, m.head

    def forward(self, x):
        feats = self.backbone(x)
        out = self.head(list(feats.values()) if isinstance(feats, OrderedDict) else feats)
        return out["cls_logits"], out["bbox_regression"]


def ssdlite_mobilenet_v3():
    return SsdLiteRaw(), image([1, 3, 160, 160]), ["cls_logits", "bbox_regression"]


# name -> (builder, family, transformer family)
MODELS = OrderedDict([
    ("resnet18", (resnet18, "cnn", False)),
    ("mobilenet_v2", (mobilenet_v2, "cnn", False)),
    ("mobilenet_v3_small", (mobilenet_v3_small, "cnn", False)),
    ("efficientnet_b0", (efficientnet_b0, "cnn", False)),
    ("regnet_x_400mf", (regnet_x_400mf, "cnn", False)),
    ("convnext_tiny", (convnext_tiny, "cnn", False)),
    ("densenet121", (densenet121, "cnn", False)),
    ("googlenet", (googlenet, "cnn", False)),
    ("shufflenet_v2", (shufflenet_v2, "cnn", False)),
    ("squeezenet1_0", (squeezenet1_0, "cnn", False)),
    ("mnasnet0_5", (mnasnet0_5, "cnn", False)),
    ("vit_b_16", (vit_b_16, "vision-transformer", True)),
    ("swin_t", (swin_t, "vision-transformer", True)),
    ("lraspp_mobilenet_v3_large", (lraspp_mobilenet_v3_large, "segmentation", False)),
    ("deeplabv3_mobilenet_v3_large", (deeplabv3_mobilenet_v3_large, "segmentation", False)),
    ("fcn_resnet18", (fcn_resnet18, "segmentation", False)),
    ("r3d_18", (r3d_18, "video", False)),
    ("retinanet_fpn", (retinanet_fpn, "detection", False)),
    ("ssdlite_mobilenet_v3", (ssdlite_mobilenet_v3, "detection", False)),
])
