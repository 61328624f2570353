"""torchvision CNNs and vision transformers with random weights (weights=None, no download)."""
import torch
import torchvision


def build(name: str) -> torch.nn.Module:
    if name == "vit_small":
        model = torchvision.models.VisionTransformer(image_size=224, patch_size=16, num_layers=4, num_heads=4,
                                                     hidden_dim=128, mlp_dim=512)
    else:
        model = getattr(torchvision.models, name)(weights=None)
    return randomize(model)


def randomize(model: torch.nn.Module) -> torch.nn.Module:
    """Random BatchNorm statistics and a non-zero classifier head, so every layer does work."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
            if isinstance(m, torch.nn.Linear) and not m.weight.any():  # ViT's head starts at zero
                torch.nn.init.normal_(m.weight, std=0.05)
    return model.eval()
