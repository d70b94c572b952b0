"""Building kforge tasks (task.json + torch.export reference packages) from PyTorch programs."""
