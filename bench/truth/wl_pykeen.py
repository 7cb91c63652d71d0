"""pykeen 1.11.1 workloads, as its tutorials run them: ``pykeen.pipeline.pipeline`` (training loop, negative
sampling, loss, regularizer, LR scheduler, early stopping on validation, rank-based evaluation on the test
set) for its main interaction models (TransE/H/R/D/F, TorusE, DistMult, ComplEx, RotatE, ConvE, ConvKB, TuckER,
RGCN, CompGCN, NodePiece, BoxE, QuatE, MuRE, PairRE, HolE, ERMLP, ERMLPE, ProjE, NTN, RESCAL, SimplE, CrossE,
AutoSF, CP, DistMA, KG2E, SE, UM), the sLCWA / LCWA / symmetric-LCWA training loops driven directly, a
hand-written training step (negative sampler + ``score_hrt`` + ``process_slcwa_scores``), the evaluators
(rank-based, sampled, macro, classification), ``pykeen.predict`` (predict_target, predict_all,
predict_triples), the negative samplers with filtering, every loss and regularizer. A random labelled
knowledge graph made here (60 entities, 6 relations); no downloads.
"""

from __future__ import annotations

from harness import Workload

N_ENT, N_REL, N_TRI = 60, 6, 900
EPOCHS = 2


def _factories(inverse=False):
    import numpy as np

    from pykeen.triples import TriplesFactory

    rng = np.random.default_rng(0)
    h = rng.integers(0, N_ENT, N_TRI)
    r = rng.integers(0, N_REL, N_TRI)
    t = (h * 7 + r * 3 + rng.integers(0, 4, N_TRI)) % N_ENT  # some structure to learn
    labeled = np.array([["e%d" % a, "r%d" % b, "e%d" % c] for a, b, c in zip(h, r, t)], dtype=str)
    labeled = np.unique(labeled, axis=0)
    tf = TriplesFactory.from_labeled_triples(labeled, create_inverse_triples=inverse)
    return tf.split([0.8, 0.1, 0.1], random_state=0)


def _pipeline(torch, device, model, inverse=False, **kw):
    from pykeen.pipeline import pipeline

    training, testing, validation = _factories(inverse)
    kw.setdefault("training_kwargs", {})
    kw["training_kwargs"] = dict({"num_epochs": EPOCHS, "batch_size": 128, "use_tqdm_batch": False},
                                 **kw["training_kwargs"])
    kw.setdefault("evaluation_kwargs", {"batch_size": 64})
    return pipeline(training=training, testing=testing, validation=validation, model=model, device=device,
                    random_seed=0, use_tqdm=False, **kw)


def _pipelines(torch, device, name, specs):
    """A workload whose cases are whole pipeline runs, one per (case name, model, kwargs)."""
    def case(model, kw):
        return lambda: _pipeline(torch, device, model, **kw).metric_results.get_metric("hits@10")
    return Workload(name, cases=[(n, case(m, dict(kw))) for n, m, kw in specs])


def build_pipeline_transe_early_stopping(torch, device):
    """TransE, sLCWA with the Bernoulli sampler, margin ranking loss, LpRegularizer, StepLR, early stopping
    evaluated on the validation triples every epoch."""
    return _pipelines(torch, device, "pipeline_transe_early_stopping", [(
        "TransE", "TransE", dict(
            model_kwargs={"embedding_dim": 32, "scoring_fct_norm": 1}, training_loop="sLCWA",
            negative_sampler="bernoulli", negative_sampler_kwargs={"num_negs_per_pos": 4}, loss="marginranking",
            loss_kwargs={"margin": 1.0}, regularizer="lp", regularizer_kwargs={"weight": 1e-4},
            optimizer="Adam", lr_scheduler="StepLR", lr_scheduler_kwargs={"step_size": 1},
            stopper="early", stopper_kwargs={"frequency": 1, "patience": 1, "metric": "hits@10",
                                             "evaluation_batch_size": 64},
            training_kwargs={"num_epochs": 3}))])


def build_pipeline_distmult_complex_lcwa(torch, device):
    return _pipelines(torch, device, "pipeline_distmult_complex_lcwa", [
        ("DistMult-LCWA-softplus", "DistMult", dict(model_kwargs={"embedding_dim": 32}, training_loop="LCWA",
                                                    loss="softplus")),
        ("ComplEx-LCWA-crossentropy", "ComplEx", dict(model_kwargs={"embedding_dim": 16}, training_loop="LCWA",
                                                      loss="crossentropy",
                                                      training_kwargs={"label_smoothing": 0.1})),
        ("ComplEx-sLCWA-bce-filtered", "ComplEx", dict(model_kwargs={"embedding_dim": 16}, training_loop="sLCWA",
                                                       loss="bcewithlogits",
                                                       negative_sampler_kwargs={"filtered": True,
                                                                                "num_negs_per_pos": 3})),
    ])


def build_pipeline_rotate_nssa(torch, device):
    return _pipelines(torch, device, "pipeline_rotate_nssa", [
        ("RotatE-NSSA", "RotatE", dict(model_kwargs={"embedding_dim": 16}, loss="nssa",
                                       loss_kwargs={"adversarial_temperature": 1.0, "margin": 6.0},
                                       negative_sampler_kwargs={"num_negs_per_pos": 8})),
        ("PairRE-adversarialbce", "PairRE", dict(model_kwargs={"embedding_dim": 16},
                                                 loss="AdversarialBCEWithLogitsLoss")),
    ])


def build_pipeline_conve_tucker(torch, device):
    return _pipelines(torch, device, "pipeline_conve_tucker", [
        ("ConvE-LCWA-BCEAfterSigmoid", "ConvE", dict(
            inverse=True, model_kwargs={"embedding_dim": 32, "output_channels": 4, "embedding_height": 4,
                                        "embedding_width": 8}, training_loop="LCWA", loss="BCEAfterSigmoid")),
        ("TuckER-LCWA", "TuckER", dict(model_kwargs={"embedding_dim": 16, "relation_dim": 8},
                                       training_loop="LCWA", loss="bcewithlogits")),
        ("ConvKB-sLCWA", "ConvKB", dict(model_kwargs={"embedding_dim": 16, "num_filters": 4})),
    ])


def build_pipeline_graph_models(torch, device):
    """Message-passing models: RGCN (with a basis decomposition), CompGCN, NodePiece (anchors by degree and
    personalised PageRank, relation tokens)."""
    return _pipelines(torch, device, "pipeline_graph_models", [
        ("RGCN", "RGCN", dict(model_kwargs={"embedding_dim": 16, "num_layers": 2,
                                                          "decomposition": "bases",
                                                          "decomposition_kwargs": {"num_bases": 2}},
                              training_kwargs={"sampler": "schlichtkrull", "batch_size": 64})),
        ("CompGCN", "CompGCN", dict(inverse=True, model_kwargs={"embedding_dim": 16,
                                                                "encoder_kwargs": {"num_layers": 1}})),
        ("NodePiece-degree", "NodePiece", dict(inverse=True, model_kwargs={
            "embedding_dim": 16, "tokenizers": ["AnchorTokenizer", "RelationTokenizer"],
            "num_tokens": [4, 4], "tokenizers_kwargs": [{"selection": "degree", "selection_kwargs": {"num_anchors": 8},
                                                         "searcher": "scipy-sparse"}, {}]})),
        ("NodePiece-ppr", "NodePiece", dict(inverse=True, model_kwargs={
            "embedding_dim": 16, "tokenizers": "AnchorTokenizer", "num_tokens": 4,
            "tokenizers_kwargs": {"selection": "pagerank", "selection_kwargs": {"num_anchors": 8},
                                  "searcher": "personalizedpagerank"}})),
    ])


def build_pipeline_geometric_models(torch, device):
    return _pipelines(torch, device, "pipeline_geometric_models", [
        ("BoxE", "BoxE", dict(model_kwargs={"embedding_dim": 16}, loss="nssa")),
        ("QuatE", "QuatE", dict(model_kwargs={"embedding_dim": 8}, training_loop="LCWA", loss="bcewithlogits")),
        ("MuRE", "MuRE", dict(model_kwargs={"embedding_dim": 16}, loss="bcewithlogits")),
        ("KG2E", "KG2E", dict(model_kwargs={"embedding_dim": 16})),
        ("TorusE", "TorusE", dict(model_kwargs={"embedding_dim": 16})),
    ])


def build_pipeline_translational(torch, device):
    return _pipelines(torch, device, "pipeline_translational", [
        ("TransH", "TransH", dict(model_kwargs={"embedding_dim": 16}, regularizer="normlimit")),
        ("TransR", "TransR", dict(model_kwargs={"embedding_dim": 16, "relation_dim": 8})),
        ("TransD", "TransD", dict(model_kwargs={"embedding_dim": 16, "relation_dim": 8})),
        ("TransF", "TransF", dict(model_kwargs={"embedding_dim": 16})),
        ("SE", "SE", dict(model_kwargs={"embedding_dim": 8})),
        ("UM", "UM", dict(model_kwargs={"embedding_dim": 16})),
    ])


def build_pipeline_semantic(torch, device):
    return _pipelines(torch, device, "pipeline_semantic", [
        ("HolE", "HolE", dict(model_kwargs={"embedding_dim": 16})),
        ("ERMLP", "ERMLP", dict(model_kwargs={"embedding_dim": 16, "hidden_dim": 16})),
        ("ERMLPE", "ERMLPE", dict(model_kwargs={"embedding_dim": 16, "hidden_dim": 16}, training_loop="LCWA")),
        ("ProjE", "ProjE", dict(model_kwargs={"embedding_dim": 16}, training_loop="LCWA")),
        ("NTN", "NTN", dict(model_kwargs={"embedding_dim": 8, "num_slices": 2})),
        ("RESCAL", "RESCAL", dict(model_kwargs={"embedding_dim": 8})),
        ("SimplE", "SimplE", dict(model_kwargs={"embedding_dim": 16})),
        ("CrossE", "CrossE", dict(model_kwargs={"embedding_dim": 16})),
        ("AutoSF", "AutoSF", dict(model_kwargs={"embedding_dim": 16})),
        ("CP", "CP", dict(model_kwargs={"embedding_dim": 16, "rank": 8})),
        ("DistMA", "DistMA", dict(model_kwargs={"embedding_dim": 16})),
    ])


def build_training_loops(torch, device):
    """SLCWATrainingLoop, LCWATrainingLoop and SymmetricLCWATrainingLoop driven directly, as the
    "bring your own" tutorial does, with a checkpoint file and sub-batching."""
    import tempfile

    from pykeen.models import DistMult, TransE
    from pykeen.training import LCWATrainingLoop, SLCWATrainingLoop, SymmetricLCWATrainingLoop
    from pykeen.training.callbacks import TrainingCallback

    training, _testing, _validation = _factories()
    ckdir = tempfile.mkdtemp(prefix="pykeen-ckpt-")

    class GradNorm(TrainingCallback):
        def post_batch(self, **kwargs):
            self.last = sum(p.grad.norm() for p in self.model.parameters() if p.grad is not None)

    def slcwa():
        model = TransE(triples_factory=training, embedding_dim=32).to(device)
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        loop = SLCWATrainingLoop(model=model, triples_factory=training, optimizer=opt,
                                 negative_sampler="basic", negative_sampler_kwargs={"num_negs_per_pos": 2})
        return loop.train(triples_factory=training, num_epochs=EPOCHS, batch_size=128, use_tqdm=False,
                          callbacks=GradNorm(), checkpoint_name="slcwa.pt", checkpoint_directory=ckdir,
                          checkpoint_frequency=0)

    def lcwa():
        model = DistMult(triples_factory=training, embedding_dim=32).to(device)
        opt = torch.optim.Adagrad(model.parameters(), lr=1e-2)
        loop = LCWATrainingLoop(model=model, triples_factory=training, optimizer=opt, target="tail")
        return loop.train(triples_factory=training, num_epochs=EPOCHS, batch_size=128, sub_batch_size=32,
                          use_tqdm=False)

    def symmetric():
        model = DistMult(triples_factory=training, embedding_dim=32).to(device)
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        loop = SymmetricLCWATrainingLoop(model=model, triples_factory=training, optimizer=opt)
        return loop.train(triples_factory=training, num_epochs=EPOCHS, batch_size=128, use_tqdm=False)

    return Workload("training_loops", cases=[("SLCWATrainingLoop", slcwa), ("LCWATrainingLoop", lcwa),
                                             ("SymmetricLCWATrainingLoop", symmetric)])


def build_manual_step(torch, device):
    """A hand-written sLCWA step: sample negatives, score_hrt, the loss's process_slcwa_scores, plus the
    model's regularization term; eval: score_t over all tails."""
    from pykeen.losses import MarginRankingLoss
    from pykeen.models import RotatE
    from pykeen.sampling import BernoulliNegativeSampler

    training, testing, _ = _factories()
    model = RotatE(triples_factory=training, embedding_dim=16).to(device)
    sampler = BernoulliNegativeSampler(mapped_triples=training.mapped_triples, num_negs_per_pos=4,
                                       filtered=True)
    loss_fn = MarginRankingLoss(margin=2.0)
    triples = training.mapped_triples
    gen = torch.Generator().manual_seed(0)

    def train():
        # as the sLCWA loop: batches and negatives are made on the host, the filtered ones moved to the model
        idx = torch.randint(0, len(triples), (128,), generator=gen)
        pos = triples[idx]
        neg, mask = sampler.sample(pos)
        if mask is not None:
            neg = neg[mask]
            mask = mask.to(device)
        pos, neg = pos.to(device), neg.to(device)
        pos_scores = model.score_hrt(pos)
        neg_scores = model.score_hrt(neg.view(-1, 3)).view(*neg.shape[:-1])
        loss = loss_fn.process_slcwa_scores(pos_scores, neg_scores, batch_filter=mask,
                                            num_entities=model.num_entities)
        return loss + model.collect_regularization_term()

    def evaluate():
        hr = testing.mapped_triples[:32, :2].to(device)
        return model.score_t(hr).topk(5, dim=-1)

    return Workload("manual_step", train=train, modules=[model], eval=evaluate, lr=1e-2)


def build_evaluators(torch, device):
    """RankBasedEvaluator (filtered, both sides), SampledRankBasedEvaluator, MacroRankBasedEvaluator and
    ClassificationEvaluator on a trained model."""
    from pykeen.evaluation import (ClassificationEvaluator, MacroRankBasedEvaluator, RankBasedEvaluator,
                                   SampledRankBasedEvaluator)
    from pykeen.models import DistMult

    training, testing, validation = _factories()
    model = DistMult(triples_factory=training, embedding_dim=32).to(device)
    filters = [training.mapped_triples, validation.mapped_triples]

    def run(make, **kw):
        def call():
            ev = make()
            res = ev.evaluate(model, testing.mapped_triples, additional_filter_triples=filters, batch_size=32,
                              use_tqdm=False, **kw)
            return res.to_dict()
        return call

    return Workload("evaluators", cases=[
        ("RankBasedEvaluator", run(lambda: RankBasedEvaluator(filtered=True))),
        ("RankBasedEvaluator-tail", run(lambda: RankBasedEvaluator(filtered=True), targets=["tail"])),
        ("SampledRankBasedEvaluator", run(lambda: SampledRankBasedEvaluator(
            evaluation_factory=testing, additional_filter_triples=filters, num_negatives=10))),
        ("MacroRankBasedEvaluator", run(lambda: MacroRankBasedEvaluator())),
        ("ClassificationEvaluator", run(lambda: ClassificationEvaluator())),
    ])


def build_predict(torch, device):
    """pykeen.predict on a trained TransE: predict_target (tail, head, relation), predict_all top-k,
    predict_triples, and the Predictions helpers (filtering known triples, to the data frame)."""
    from pykeen.models import TransE
    from pykeen.predict import predict_all, predict_target, predict_triples

    training, testing, _ = _factories()
    model = TransE(triples_factory=training, embedding_dim=16).to(device)
    ents = list(training.entity_to_id)
    rels = list(training.relation_to_id)

    def target():
        tails = predict_target(model=model, head=ents[0], relation=rels[0], triples_factory=training)
        tails = tails.filter_triples(training).add_membership_columns(testing=testing)
        heads = predict_target(model=model, relation=rels[1], tail=ents[2], triples_factory=training)
        relations = predict_target(model=model, head=ents[0], tail=ents[3], triples_factory=training)
        return tails.df, heads.df, relations.df

    def everything():
        pack = predict_all(model=model, k=20, batch_size=16)
        return pack.process(factory=training).df

    def triples():
        pack = predict_triples(model=model, triples=testing)
        return pack.process(factory=training).df

    return Workload("predict", cases=[("predict_target", target), ("predict_all", everything),
                                      ("predict_triples", triples)])


def build_negative_samplers(torch, device):
    from pykeen.sampling import BasicNegativeSampler, BernoulliNegativeSampler, PseudoTypedNegativeSampler

    training, _, _ = _factories()
    triples = training.mapped_triples
    batch = triples[:128]  # the training loop samples negatives for host batches
    specs = {
        "basic": lambda: BasicNegativeSampler(mapped_triples=triples, num_negs_per_pos=3,
                                              corruption_scheme=("head", "relation", "tail")),
        "basic-filtered-bloom": lambda: BasicNegativeSampler(mapped_triples=triples, num_negs_per_pos=3,
                                                             filtered=True, filterer="bloom"),
        "basic-filtered-pythonset": lambda: BasicNegativeSampler(mapped_triples=triples, num_negs_per_pos=3,
                                                                 filtered=True, filterer="python-set"),
        "bernoulli": lambda: BernoulliNegativeSampler(mapped_triples=triples, num_negs_per_pos=3),
        "pseudo-typed": lambda: PseudoTypedNegativeSampler(mapped_triples=triples, num_negs_per_pos=3),
    }

    def case(make):
        sampler = make()
        return lambda: sampler.sample(batch)

    return Workload("negative_samplers", cases=[(n, case(m)) for n, m in specs.items()])


def build_losses(torch, device):
    """Every loss on device scores: the sLCWA form (positive/negative scores, with a filter mask where the
    loss takes one) and the LCWA form (score matrix and labels), backward included."""
    from pykeen import losses as L

    gen = torch.Generator(device=device).manual_seed(0)
    names = ["MarginRankingLoss", "SoftMarginRankingLoss", "PairwiseLogisticLoss", "DoubleMarginLoss",
             "PointwiseHingeLoss", "SoftPointwiseHingeLoss", "SoftplusLoss", "BCEWithLogitsLoss",
             "BCEAfterSigmoidLoss", "MSELoss", "CrossEntropyLoss", "InfoNCELoss", "NSSALoss",
             "AdversarialBCEWithLogitsLoss", "FocalLoss"]

    def case(name):
        loss = getattr(L, name)()

        def run():
            pos = torch.randn(64, 1, device=device, generator=gen, requires_grad=True)
            neg = torch.randn(64, 4, device=device, generator=gen, requires_grad=True)
            out = loss.process_slcwa_scores(pos, neg, num_entities=N_ENT)
            if name not in ("MarginRankingLoss", "SoftMarginRankingLoss", "PairwiseLogisticLoss", "InfoNCELoss"):
                mask = torch.rand(64, 4, device=device, generator=gen) > 0.2
                out = out + loss.process_slcwa_scores(pos, neg[mask], batch_filter=mask, num_entities=N_ENT)
            preds = torch.randn(32, N_ENT, device=device, generator=gen, requires_grad=True)
            labels = (torch.rand(32, N_ENT, device=device, generator=gen) > 0.9).float()
            try:
                out = out + loss.process_lcwa_scores(preds, labels, label_smoothing=0.1, num_entities=N_ENT)
            except L.UnsupportedLabelSmoothingError:
                out = out + loss.process_lcwa_scores(preds, labels, num_entities=N_ENT)
            out.backward()
            return out
        return run

    return Workload("losses", cases=[(n, case(n)) for n in names])


def build_regularizers(torch, device):
    """The regularizers inside a training step of an ERMLP model (update, term, reset), and the combined one."""
    from pykeen.regularizers import (CombinedRegularizer, LpRegularizer, NormLimitRegularizer,
                                     OrthogonalityRegularizer, PowerSumRegularizer)

    gen = torch.Generator(device=device).manual_seed(0)
    specs = {
        "Lp": lambda: LpRegularizer(weight=0.1, p=2.0, normalize=True),
        "PowerSum": lambda: PowerSumRegularizer(weight=0.1, p=3.0),
        "NormLimit": lambda: NormLimitRegularizer(weight=0.1, max_norm=1.0),
        "Orthogonality": lambda: OrthogonalityRegularizer(weight=0.1),
        "Combined": lambda: CombinedRegularizer([LpRegularizer(weight=0.1), PowerSumRegularizer(weight=0.05)]),
    }

    def case(name, make):
        reg = make().to(device)

        def run():
            w = torch.randn(32, 16, device=device, generator=gen, requires_grad=True)
            d = torch.randn(32, 16, device=device, generator=gen, requires_grad=True)
            reg.update(w, d) if name == "Orthogonality" else reg.update(w)
            term = reg.pop_regularization_term()
            term.backward()
            return term
        return run

    return Workload("regularizers", cases=[(n, case(n, m)) for n, m in specs.items()])


WORKLOADS = [build_pipeline_transe_early_stopping, build_pipeline_distmult_complex_lcwa, build_pipeline_rotate_nssa,
             build_pipeline_conve_tucker, build_pipeline_graph_models, build_pipeline_geometric_models,
             build_pipeline_translational, build_pipeline_semantic, build_training_loops, build_manual_step,
             build_evaluators, build_predict, build_negative_samplers, build_losses, build_regularizers]
