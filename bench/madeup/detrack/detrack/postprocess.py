import torch

from .boxes import batched_nms, box_iou


class Detector:
    def __init__(self, model, score_thresh=0.05, nms_thresh=0.5, max_dets=100):
        self.model = model
        self.score_thresh = score_thresh
        self.nms_thresh = nms_thresh
        self.max_dets = max_dets

    def postprocess(self, logits, boxes):
        results = []
        for lg, bx in zip(logits, boxes):
            scores, labels = lg.sigmoid().max(dim=-1)
            keep = scores > self.score_thresh
            scores, labels, bx = scores[keep], labels[keep], bx[keep]  # SYNC
            keep = batched_nms(bx, scores, labels, self.nms_thresh)[: self.max_dets]
            results.append({"boxes": bx[keep], "scores": scores[keep], "labels": labels[keep]})
        return results

    @torch.no_grad()
    def __call__(self, images):
        logits, boxes = self.model(images)
        return self.postprocess(logits, boxes)


class Tracker:
    def __init__(self, iou_thresh=0.3, max_age=30):
        self.iou_thresh = iou_thresh
        self.max_age = max_age
        self.tracks = []
        self.next_id = 0

    def update(self, dets):
        boxes = dets["boxes"]
        if not self.tracks:
            for b in boxes:
                self._start(b)
            return self.tracks
        prev = torch.stack([t["box"] for t in self.tracks])
        iou = box_iou(prev, boxes)
        matched = set()
        for ti, t in enumerate(self.tracks):
            if iou.shape[1] == 0:
                break
            j = int(iou[ti].argmax())  # SYNC
            if iou[ti, j] >= self.iou_thresh and j not in matched:  # SYNC
                t["box"] = boxes[j]
                t["age"] = 0
                matched.add(j)
            else:
                t["age"] += 1
        for j in range(boxes.shape[0]):
            if j not in matched:
                self._start(boxes[j])
        self.tracks = [t for t in self.tracks if t["age"] <= self.max_age]
        return self.tracks

    def _start(self, box):
        self.tracks.append({"id": self.next_id, "box": box, "age": 0})
        self.next_id += 1


def run_video(detector, tracker, frames, device):
    ids_per_frame = []
    for frame in frames:
        dets = detector(frame.to(device).unsqueeze(0))[0]  # SYNC
        tracks = tracker.update(dets)
        ids_per_frame.append([t["id"] for t in tracks])
    return ids_per_frame
