import math

import torch
from torch.utils.data import DataLoader

from .data import dynamic_padding_collate, trim_batch


def evaluate(model, loader, device):
    model.eval()
    preds, labels = [], []
    total_loss = 0.0
    with torch.no_grad():
        for batch in loader:
            batch = {k: v.to(device) for k, v in batch.items()}  # SYNC
            input_ids, attention_mask = trim_batch(batch["input_ids"], batch["attention_mask"])
            out = model(input_ids=input_ids, attention_mask=attention_mask, labels=batch["labels"])
            total_loss += out.loss.item()  # SYNC
            preds.extend(out.logits.argmax(-1).cpu().tolist())  # SYNC
            labels.extend(batch["labels"].cpu().tolist())  # SYNC
    acc = sum(int(p == l) for p, l in zip(preds, labels)) / len(labels)
    return {"loss": total_loss / len(loader), "acc": acc}


def train(model, train_set, eval_set, device="cuda", epochs=3, lr=2e-5, batch_size=32, accum_steps=2, warmup=0.1):
    model.to(device)  # SYNC
    loader = DataLoader(train_set, batch_size=batch_size, shuffle=True, collate_fn=dynamic_padding_collate)
    eval_loader = DataLoader(eval_set, batch_size=64, collate_fn=dynamic_padding_collate)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    total = epochs * math.ceil(len(loader) / accum_steps)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, s / max(1, warmup * total)))
    scaler = torch.amp.GradScaler("cuda")
    best = -1.0
    step = 0
    for epoch in range(epochs):
        model.train()
        running = torch.zeros((), device=device)
        for i, batch in enumerate(loader):
            batch = {k: v.to(device) for k, v in batch.items()}  # SYNC
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = model(**batch)
                loss = out.loss / accum_steps
            scaler.scale(loss).backward()
            running += loss.detach()
            if (i + 1) % accum_steps == 0:
                scaler.unscale_(opt)
                norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(opt)  # SYNC
                scaler.update()
                opt.zero_grad(set_to_none=True)
                sched.step()
                step += 1
                if step % 50 == 0:
                    print(f"step {step} loss {running.item() / 50:.4f} grad_norm {norm:.2f}")  # SYNC
                    running.zero_()
        metrics = evaluate(model, eval_loader, device)
        if metrics["acc"] > best:
            best = metrics["acc"]
            torch.save(model.state_dict(), "best.pt")  # SYNC
    return best
