import torch
from torch.utils.data import DataLoader, Dataset

from sekit.model import MaskNet, Mixer
from sekit.stft import pesq_like, si_snr


class NoisySpeech(Dataset):
    def __init__(self, clean, noise, seconds=2, sr=16000):
        self.clean, self.noise, self.n = clean, noise, seconds * sr
        self.mix = Mixer()

    def __len__(self):
        return len(self.clean)

    def __getitem__(self, i):
        c = torch.as_tensor(self.clean[i][: self.n], dtype=torch.float32)
        z = torch.as_tensor(self.noise[i % len(self.noise)][: self.n], dtype=torch.float32)
        return self.mix(c, z)


def train(clean, noise, device="cuda", epochs=5):
    model = MaskNet().to(device)  # SYNC
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = DataLoader(NoisySpeech(clean, noise), batch_size=8, shuffle=True, num_workers=2, pin_memory=True)
    for epoch in range(epochs):
        for noisy, target in loader:
            noisy = noisy.to(device, non_blocking=True)
            target = target.to(device, non_blocking=True)
            est = model(noisy)
            loss = -si_snr(est, target).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            print(f"epoch {epoch}: loss {loss.item():.2f} dist {pesq_like(est, target):.4f}")  # SYNC
