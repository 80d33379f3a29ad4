"""The eval session really has what the torchvision families need: torchvision's C++ ops and timm."""

from __future__ import annotations


def test_torchvision_and_timm_run_here():
    import timm  # noqa: F401
    import torch
    import torchvision
    import torchvision.ops

    boxes = torch.tensor([[0.0, 0.0, 2.0, 2.0], [0.0, 0.0, 2.0, 1.9]])
    assert torchvision.ops.nms(boxes, torch.tensor([1.0, 0.5]), 0.5).tolist() == [0]
    # torchvision 0.N+15 is torch 2.N's pair (0.28 for 2.13, as the eval session pins; 0.21 for 2.6 in lowest)
    assert int(torchvision.__version__.split(".")[1]) == int(torch.__version__.split(".")[1]) + 15
