"""sentence-transformers 6.0.1 workloads: its losses in training steps on a tiny random BERT built
locally (vocabulary + config written to a temporary folder; no hub), CrossEncoder losses, and
encode / semantic search / evaluators as users call them.
"""

from __future__ import annotations

import os
import tempfile

from harness import Workload

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

WORDS = ("the a dog cat car red blue runs sleeps fast slow big small house street man woman child plays "
         "ball park river tree green old new eats food sun rain night day city road bike train sky").split()
B = 8


def _sentences(n, seed):
    import random

    rnd = random.Random(seed)
    return [" ".join(rnd.choice(WORDS) for _ in range(rnd.randint(4, 10))) for _ in range(n)]


def _tiny_bert(folder, head=None):
    """A 2-layer BERT with random weights and a word-level vocabulary, saved as a local model."""
    import transformers

    os.makedirs(folder, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS
    with open(os.path.join(folder, "vocab.txt"), "w") as fh:
        fh.write("\n".join(vocab) + "\n")
    cfg = transformers.BertConfig(vocab_size=len(vocab), hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                  intermediate_size=128, max_position_embeddings=64, num_labels=1)
    model = (transformers.BertForSequenceClassification if head else transformers.BertModel)(cfg)
    model.save_pretrained(folder)
    transformers.BertTokenizerFast(os.path.join(folder, "vocab.txt")).save_pretrained(folder)
    return folder


_TMP = tempfile.mkdtemp(prefix="tsl-st-")


def _model(torch, device):
    from sentence_transformers import SentenceTransformer

    path = os.path.join(_TMP, "bert")
    if not os.path.isdir(path):
        _tiny_bert(path)
    return SentenceTransformer(path, device=str(device))


def _features(model, texts, device):
    feats = model.preprocess(texts) if hasattr(model, "preprocess") else model.tokenize(texts)
    return {k: (v.to(device) if hasattr(v, "to") else v) for k, v in feats.items()}


def build_losses(torch, device):
    """Each loss: features of (anchor, positive[, negative]) columns prepared once on the device."""
    from sentence_transformers.sentence_transformer import losses as L

    model = _model(torch, device)
    dim = model.get_sentence_embedding_dimension()
    cols = [_features(model, _sentences(B, s), device) for s in range(3)]
    gen = torch.Generator(device=device).manual_seed(0)
    scores = torch.rand(B, device=device, generator=gen)
    binary = torch.randint(0, 2, (B,), device=device, generator=gen)
    classes = torch.tensor([0, 0, 1, 1, 2, 2, 3, 3], device=device)
    teacher = torch.randn(B, dim, device=device, generator=gen)
    margins = torch.randn(B, device=device, generator=gen)
    specs = {
        "MultipleNegativesRankingLoss": (L.MultipleNegativesRankingLoss(model), 3, None),
        "CachedMultipleNegativesRankingLoss": (L.CachedMultipleNegativesRankingLoss(model, mini_batch_size=4), 2, None),
        "MultipleNegativesSymmetricRankingLoss": (L.MultipleNegativesSymmetricRankingLoss(model), 2, None),
        "GISTEmbedLoss": (L.GISTEmbedLoss(model, guide=model), 3, None),
        "CoSENTLoss": (L.CoSENTLoss(model), 2, scores),
        "AnglELoss": (L.AnglELoss(model), 2, scores),
        "CosineSimilarityLoss": (L.CosineSimilarityLoss(model), 2, scores),
        "ContrastiveLoss": (L.ContrastiveLoss(model), 2, binary),
        "OnlineContrastiveLoss": (L.OnlineContrastiveLoss(model), 2, binary),
        "TripletLoss": (L.TripletLoss(model), 3, None),
        "BatchHardTripletLoss": (L.BatchHardTripletLoss(model), 1, classes),
        "BatchAllTripletLoss": (L.BatchAllTripletLoss(model), 1, classes),
        "BatchSemiHardTripletLoss": (L.BatchSemiHardTripletLoss(model), 1, classes),
        "BatchHardSoftMarginTripletLoss": (L.BatchHardSoftMarginTripletLoss(model), 1, classes),
        "SoftmaxLoss": (L.SoftmaxLoss(model, dim, 3).to(device), 2, binary),
        "MSELoss": (L.MSELoss(model), 1, teacher),
        "MarginMSELoss": (L.MarginMSELoss(model), 3, margins),
        "MegaBatchMarginLoss": (L.MegaBatchMarginLoss(model, mini_batch_size=4), 2, None),
        "MatryoshkaLoss(MNRL)": (L.MatryoshkaLoss(model, L.MultipleNegativesRankingLoss(model), [64, 32, 16]), 2, None),
        "AdaptiveLayerLoss(MNRL)": (L.AdaptiveLayerLoss(model, L.MultipleNegativesRankingLoss(model)), 2, None),
        "ContrastiveTensionLossInBatchNegatives": (L.ContrastiveTensionLossInBatchNegatives(model), 2, None),
    }

    def case(loss, ncols, labels):
        def train_step():
            model.train()
            value = loss(cols[:ncols], labels)
            value.backward()
            model.zero_grad(set_to_none=True)
            return value
        return train_step

    return Workload("losses", cases=[(n, case(*spec)) for n, spec in specs.items()])


def build_mnrl_training(torch, device):
    """The classic training step: MNRL over (anchor, positive, hard negative), eval by encode."""
    from sentence_transformers.sentence_transformer import losses as L

    model = _model(torch, device)
    loss = L.MultipleNegativesRankingLoss(model)
    cols = [_features(model, _sentences(B, s), device) for s in range(3)]
    sentences = _sentences(32, 7)
    return Workload("mnrl_training", train=lambda: loss(cols, None), modules=[model],
                    eval=lambda: model.encode(sentences, batch_size=16, convert_to_tensor=True,
                                              normalize_embeddings=True))


def build_inference(torch, device):
    """encode, similarity, semantic search, community detection, quantization, an evaluator."""
    from sentence_transformers import util
    from sentence_transformers.sentence_transformer.evaluation import EmbeddingSimilarityEvaluator

    model = _model(torch, device).eval()
    corpus = _sentences(64, 1)
    queries = _sentences(8, 2)
    gen = torch.Generator(device=device).manual_seed(0)
    emb = torch.nn.functional.normalize(torch.randn(64, 64, device=device, generator=gen), dim=-1)
    evaluator = EmbeddingSimilarityEvaluator(_sentences(16, 3), _sentences(16, 4), [i / 16 for i in range(16)],
                                             batch_size=8, show_progress_bar=False)

    def search():
        c = model.encode(corpus, convert_to_tensor=True, batch_size=32)
        q = model.encode(queries, convert_to_tensor=True)
        return util.semantic_search(q, c, top_k=5)

    return Workload("inference", cases=[
        ("encode-tensor", lambda: model.encode(corpus, convert_to_tensor=True, batch_size=16)),
        ("encode-numpy", lambda: model.encode(corpus, batch_size=16)),
        ("similarity", lambda: model.similarity(model.encode(queries, convert_to_tensor=True),
                                                model.encode(corpus[:16], convert_to_tensor=True))),
        ("semantic_search", search),
        ("community_detection", lambda: util.community_detection(emb, threshold=0.1, min_community_size=2)),
        ("paraphrase_mining_embeddings", lambda: util.paraphrase_mining_embeddings(emb, top_k=3)),
        ("quantize_embeddings", lambda: model.encode(queries, precision="int8", convert_to_tensor=True)),
        ("EmbeddingSimilarityEvaluator", lambda: evaluator(model)),
    ])


def build_cross_encoder(torch, device):
    """CrossEncoder: BCE and listwise losses on (query, passage) pairs, then predict / rank."""
    from sentence_transformers.cross_encoder import CrossEncoder
    from sentence_transformers.cross_encoder import losses as CL

    path = os.path.join(_TMP, "bert-cls")
    if not os.path.isdir(path):
        _tiny_bert(path, head="cls")
    model = CrossEncoder(path, device=str(device), num_labels=1)
    gen = torch.Generator(device=device).manual_seed(0)
    q, p = _sentences(B, 5), _sentences(B, 6)
    labels = torch.randint(0, 2, (B,), device=device, generator=gen).float()
    docs = [_sentences(4, 10 + i) for i in range(4)]
    list_labels = [torch.tensor(v, device=device, dtype=torch.float)
                   for v in ([1, 0, 0, 1], [0, 1, 0, 0], [1, 1, 0, 0], [0, 0, 0, 1])]

    def step(loss, *args):
        def run():
            model.train()
            value = loss(*args)
            value.backward()
            model.zero_grad(set_to_none=True)
            return value
        return run

    return Workload("cross_encoder", cases=[
        ("BinaryCrossEntropyLoss", step(CL.BinaryCrossEntropyLoss(model), [q, p], labels)),
        ("MultipleNegativesRankingLoss", step(CL.MultipleNegativesRankingLoss(model), [q, p], None)),
        ("ListNetLoss", step(CL.ListNetLoss(model), [q[:4], docs], list_labels)),
        ("LambdaLoss", step(CL.LambdaLoss(model), [q[:4], docs], list_labels)),
        ("RankNetLoss", step(CL.RankNetLoss(model), [q[:4], docs], list_labels)),
        ("predict", lambda: model.predict(list(zip(q, p)), convert_to_tensor=True)),
        ("rank", lambda: model.rank(q[0], p, top_k=3)),
    ])


WORKLOADS = [build_mnrl_training, build_losses, build_inference, build_cross_encoder]
