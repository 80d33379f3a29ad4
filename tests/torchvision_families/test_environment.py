"""The eval session really has what the torchvision families need: torchvision's C++ ops and timm."""

from __future__ import annotations


def test_torchvision_and_timm_run_here():
    import timm  # noqa: F401
    import torch
    import torchvision
    import torchvision.ops

    boxes = torch.tensor([[0.0, 0.0, 2.0, 2.0], [0.0, 0.0, 2.0, 1.9]])
    assert torchvision.ops.nms(boxes, torch.tensor([1.0, 0.5]), 0.5).tolist() == [0]
    assert torchvision.__version__.startswith("0.28.0")
