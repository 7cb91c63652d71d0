import torch
import torch.nn.functional as F

from .models import EMA, TinyUNet
from .schedulers import DDIMScheduler


def train(dataset, epochs=1, batch_size=16, lr=1e-4, device="cuda", log_every=50):
    model = TinyUNet().to(device)  # SYNC
    ema = EMA(model)
    scheduler = DDIMScheduler()
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=True)
    step = 0
    losses = []
    for epoch in range(epochs):
        for images in loader:
            clean = images.to(device)  # SYNC
            noise = torch.randn_like(clean)
            timesteps = torch.randint(0, scheduler.num_train_timesteps, (clean.shape[0],), device=device).long()
            noisy = scheduler.add_noise(clean, noise, timesteps)
            pred = model(noisy, timesteps)
            loss = F.mse_loss(pred, noise)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            ema.update(model)
            losses.append(loss.detach())
            step += 1
            if step % log_every == 0:
                mean_loss = torch.stack(losses[-log_every:]).mean().item()  # SYNC
                print(f"step {step} loss {mean_loss:.4f}")
    return model, ema
