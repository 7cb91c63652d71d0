import time

import torch
import torch.nn.functional as F

from .moco import MoCo


class AverageMeter:
    def __init__(self, name):
        self.name = name
        self.reset()

    def reset(self):
        self.val = self.avg = self.sum = self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def accuracy(output, target, topk=(1,)):
    with torch.no_grad():
        maxk = max(topk)
        batch_size = target.size(0)
        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))
        res = []
        for k in topk:
            correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
            res.append(correct_k.mul_(100.0 / batch_size))
        return res


def train_one_epoch(loader, model, optimizer, epoch, print_freq=10):
    losses = AverageMeter("Loss")
    top1 = AverageMeter("Acc@1")
    batch_time = AverageMeter("Time")
    model.train()
    end = time.time()
    for i, (images, _) in enumerate(loader):
        im_q = images[0].cuda(non_blocking=True)
        im_k = images[1].cuda(non_blocking=True)
        output, target = model(im_q, im_k)
        loss = F.cross_entropy(output, target)
        acc1, acc5 = accuracy(output, target, topk=(1, 5))
        losses.update(loss.item(), images[0].size(0))  # SYNC
        top1.update(acc1[0], images[0].size(0))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        batch_time.update(time.time() - end)
        end = time.time()
        if i % print_freq == 0:
            print(f"epoch {epoch} [{i}] loss {losses.avg:.3f} acc@1 {top1.avg:.2f}")  # SYNC


def main(dataset, encoder, epochs=10, lr=0.03):
    model = MoCo(encoder).cuda()  # SYNC
    optimizer = torch.optim.SGD(model.parameters(), lr, momentum=0.9, weight_decay=1e-4)
    loader = torch.utils.data.DataLoader(dataset, batch_size=256, shuffle=True, num_workers=4, pin_memory=True, drop_last=True)
    for epoch in range(epochs):
        train_one_epoch(loader, model, optimizer, epoch)
