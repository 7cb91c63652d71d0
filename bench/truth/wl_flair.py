"""flair 0.15.1 workloads, as its tutorials and tests run them: a synthetic labelled corpus made here (named
entities as spans, part-of-speech and lemma labels on tokens, topic labels and a regression score on
sentences, relations between entities, entity-linking labels), small models with random init, and:
``SequenceTagger`` (CRF + BiLSTM on one-hot + character embeddings; contextual string embeddings from a
fresh ``LanguageModel`` via ``FlairEmbeddings``; a fine-tuned transformer), ``TokenClassifier``,
``TextClassifier`` (transformer document embeddings; an RNN over token embeddings, multi-label; the
prototypical and DeepNCM decoders), ``TextRegressor``, ``TextPairClassifier`` / ``TextPairRegressor`` /
``TextTripleClassifier``, ``RelationClassifier`` (entity-marker encoding), ``RelationExtractor``,
``SpanClassifier`` (entity linking), ``Lemmatizer`` (seq2seq with attention), ``TARSClassifier``
and ``TARSTagger`` (zero-shot too), ``MultitaskModel``, and the trainers: ``ModelTrainer.train`` /
``fine_tune`` (one epoch, evaluation on dev and test, checkpoints) and ``LanguageModelTrainer``. Each model
is recorded through ``forward_loss`` training steps, ``predict`` (eval) and ``evaluate``; the document
embeddings (pool, RNN, CNN, LM, TF-IDF) and ``store_embeddings`` are recorded one by one. The transformer is
a tiny BERT with a word-piece vocabulary written here (``save_pretrained`` to a temporary folder, loaded by
flair from that path): no downloads.
"""

from __future__ import annotations

import os
import random
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from harness import Workload  # noqa: E402

ENT = {"PER": ["Anna", "Bert", "Carla", "David", "Emil", "Frida"], "LOC": ["Berlin", "Paris", "Rome", "Oslo"],
       "ORG": ["Acme", "Globex", "Initech", "Umbrella"]}
FILL = ["the", "a", "visited", "met", "works", "for", "in", "and", "today", "with", "company", "cities", "quickly",
        "big", "small", "went", "to", "from", "said", "games", "votes", "markets"]
POS = {"the": "DET", "a": "DET", "visited": "VERB", "met": "VERB", "works": "VERB", "for": "ADP", "in": "ADP",
       "and": "CCONJ", "today": "ADV", "with": "ADP", "company": "NOUN", "cities": "NOUN", "quickly": "ADV",
       "big": "ADJ", "small": "ADJ", "went": "VERB", "to": "ADP", "from": "ADP", "said": "VERB", "games": "NOUN",
       "votes": "NOUN", "markets": "NOUN"}
TOPICS = ["sports", "politics", "business"]
N_TRAIN, N_DEV, N_TEST, BS = 16, 6, 6, 8
_CACHE: dict = {}


def _flair(device):
    import flair

    flair.device = device
    flair.set_seed(0)
    return flair


def _sentences(n, seed, multi=False):
    """Labelled sentences: ner spans, pos / lemma per token, topic (one or two) and score per sentence,
    works_for relations (PER -> ORG) and nel links on entity spans."""
    from flair.data import Relation, Sentence

    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words, spans = [], []
        if rng.random() < 0.5:  # "<PER> works for <ORG>": a relation in about half the sentences
            spans += [(0, 1, "PER"), (3, 4, "ORG")]
            words += [rng.choice(ENT["PER"]), "works", "for", rng.choice(ENT["ORG"])]
        for _ in range(rng.randint(2, 4)):
            if rng.random() < 0.45:
                typ = rng.choice(sorted(ENT))
                name = rng.choice(ENT[typ])
                parts = [name] if rng.random() < 0.7 else [name, rng.choice(ENT[typ])]
                spans.append((len(words), len(words) + len(parts), typ))
                words += parts
            else:
                words += [rng.choice(FILL) for _ in range(rng.randint(1, 2))]
        s = Sentence(words)
        for start, end, typ in spans:
            s[start:end].add_label("ner", typ)
            s[start:end].add_label("nel", "%s_%s" % (words[start], typ.lower()))
        for i, w in enumerate(words):
            s[i].add_label("pos", POS.get(w, "PROPN"))
            s[i].add_label("lemma", w.lower()[:-1] if w.endswith("s") and len(w) > 3 else w.lower())
        topic = rng.choice(TOPICS)
        s.add_label("topic", topic)
        if multi:
            s.add_label("topics", topic)
            if rng.random() < 0.5:
                s.add_label("topics", rng.choice(TOPICS))
        s.add_label("score", str(round(rng.uniform(0, 5), 2)))
        pers = [x for x in spans if x[2] == "PER"]
        orgs = [x for x in spans if x[2] == "ORG"]
        if pers and orgs:
            p, o = pers[0], orgs[0]
            Relation(s[p[0]:p[1]], s[o[0]:o[1]]).add_label("relation", "works_for")
        out.append(s)
    return out


def _corpus(multi=False, seed=0):
    from flair.data import Corpus
    from flair.datasets import SentenceDataset

    return Corpus(train=SentenceDataset(_sentences(N_TRAIN, seed, multi)),
                  dev=SentenceDataset(_sentences(N_DEV, seed + 1, multi)),
                  test=SentenceDataset(_sentences(N_TEST, seed + 2, multi)), sample_missing_splits=False)


def _char_dict():
    from flair.data import Dictionary

    d = Dictionary()
    for w in sum(ENT.values(), []) + FILL + [" ", "\n", "-", "_", "."]:
        for c in w + w.lower() + w.upper():
            d.add_item(c)
    return d


def _onehot(corpus, dim=32):
    from flair.embeddings import OneHotEmbeddings

    return OneHotEmbeddings.from_corpus(corpus, min_freq=1, embedding_length=dim)


def _chars(dim=16):
    from flair.embeddings import CharacterEmbeddings

    return CharacterEmbeddings(path_to_char_dict=_char_dict(), char_embedding_dim=dim, hidden_size_char=dim)


def _lm(forward=True, hidden=32):
    from flair.models import LanguageModel

    return LanguageModel(_char_dict(), is_forward_lm=forward, hidden_size=hidden, nlayers=1, embedding_size=16)


def _bert_dir(torch):
    """A tiny random BERT with a word-piece vocabulary of the corpus words, saved where flair loads it."""
    if "bert" in _CACHE:
        return _CACHE["bert"]
    from transformers import BertConfig, BertModel, BertTokenizerFast

    d = tempfile.mkdtemp(prefix="flair-bert-")
    chars = sorted({c for w in sum(ENT.values(), []) + FILL + TOPICS for c in w.lower()} | set("0123456789.,-_@#*^[]"))
    words = sorted({w.lower() for w in sum(ENT.values(), []) + FILL + TOPICS + sorted(ENT) + sorted(POS.values())}
                   | {"head", "tail", "per", "org", "loc", "works", "for", "label", "entity"})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + words + [c for c in chars if c not in words] + \
        ["##" + c for c in chars]
    with open(os.path.join(d, "vocab.txt"), "w") as fh:
        fh.write("\n".join(vocab) + "\n")
    BertTokenizerFast(vocab_file=os.path.join(d, "vocab.txt"), do_lower_case=True).save_pretrained(d)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=128)
    BertModel(cfg).save_pretrained(d)
    _CACHE["bert"] = d
    return d


def _name(kw):
    """A name of its own for each transformer embedding: tokens keep embeddings by name."""
    _CACHE["n"] = _CACHE.get("n", 0) + 1
    kw.setdefault("name", "tiny-bert-%d" % _CACHE["n"])
    kw.setdefault("fine_tune", True)


def _word_tf(torch, **kw):
    from flair.embeddings import TransformerWordEmbeddings

    _name(kw)
    return TransformerWordEmbeddings(_bert_dir(torch), **kw)


def _doc_tf(torch, **kw):
    from flair.embeddings import TransformerDocumentEmbeddings

    _name(kw)
    return TransformerDocumentEmbeddings(_bert_dir(torch), **kw)


def _batches(data, rng_seed=0):
    """An endless round of mini-batches over a list of data points."""
    rng = random.Random(rng_seed)
    data = list(data)
    state = {"i": 0}

    def nxt():
        if state["i"] + BS > len(data):
            rng.shuffle(data)
            state["i"] = 0
        b = data[state["i"]:state["i"] + BS]
        state["i"] += BS
        return b
    return nxt


def _loss(out):
    return out[0] if isinstance(out, tuple) else out


def _step(model, data):
    """forward_loss + backward on a fresh mini-batch (embeddings of the last step dropped first)."""
    from flair.training_utils import store_embeddings

    def run():
        store_embeddings(data, "none")
        was = model.training
        model.train()
        try:
            return _loss(model.forward_loss(data)).backward()
        finally:
            model.train(was)
    return run


def _model_workload(name, model, corpus, label_type, train_data=None, eval_data=None, predict_kw=None, cases=(),
                    trainer=None, lr=1e-3):
    """train: forward_loss on a mini-batch; eval: predict on the test sentences; cases: evaluate, the
    trainer's one-epoch run, then the extra cases."""
    from flair.training_utils import store_embeddings

    train_data = list(train_data if train_data is not None else corpus.train)
    eval_data = list(eval_data if eval_data is not None else corpus.test)
    nxt = _batches(train_data)
    predict_kw = dict(predict_kw or {})

    last = []

    def train():
        batch = nxt()
        last[:] = batch
        return _loss(model.forward_loss(batch))

    def after_step():
        store_embeddings(last, "none")  # as the trainer after each step: drop this step's embeddings

    def evaluate():
        return model.evaluate(eval_data, gold_label_type=label_type, mini_batch_size=BS).main_score

    all_cases = [("evaluate", evaluate)]
    if trainer is not None:
        all_cases.append(trainer)
    all_cases += list(cases)
    return Workload(name, train=train, modules=[model], after_step=after_step,
                    eval=lambda: model.predict(eval_data, mini_batch_size=BS, **predict_kw), cases=all_cases, lr=lr)


def _trainer_case(model, corpus, fine_tune=False, **kw):
    from flair.trainers import ModelTrainer

    def run():
        from flair.training_utils import store_embeddings

        for split in (corpus.train, corpus.dev, corpus.test):
            store_embeddings(list(split), "none")  # no graph left from the steps recorded before
        trainer = ModelTrainer(model, corpus)
        base = tempfile.mkdtemp(prefix="flair-train-")
        if fine_tune:
            return trainer.fine_tune(base, max_epochs=1, mini_batch_size=BS, learning_rate=5e-4, **kw)
        return trainer.train(base, max_epochs=1, mini_batch_size=BS, learning_rate=0.1, **kw)
    return ("ModelTrainer.fine_tune" if fine_tune else "ModelTrainer.train", run)


def build_sequence_tagger_crf(torch, device):
    """The classic NER tagger: StackedEmbeddings(one-hot words + character LSTM) -> BiLSTM -> CRF (BIOES),
    Viterbi decoding, ModelTrainer.train with SGD and AnnealOnPlateau, save / load."""
    _flair(device)
    from flair.embeddings import StackedEmbeddings
    from flair.models import SequenceTagger

    corpus = _corpus()
    tags = corpus.make_label_dictionary("ner", add_unk=False)
    emb = StackedEmbeddings([_onehot(corpus), _chars()])
    tagger = SequenceTagger(hidden_size=32, embeddings=emb, tag_dictionary=tags, tag_type="ner", use_crf=True)
    path = os.path.join(tempfile.mkdtemp(prefix="flair-"), "tagger.pt")

    def save_load():
        tagger.save(path)
        return SequenceTagger.load(path).predict(list(corpus.test)[:2])

    return _model_workload("sequence_tagger_crf", tagger, corpus, "ner",
                           trainer=_trainer_case(tagger, corpus, embeddings_storage_mode="cpu"),
                           cases=[("predict-all-probabilities", lambda: tagger.predict(
                               list(corpus.test), mini_batch_size=BS, return_probabilities_for_all_classes=True,
                               label_name="predicted")), ("save-load", save_load)])


def build_sequence_tagger_flair_embeddings(torch, device):
    """Contextual string embeddings: FlairEmbeddings over a forward and a backward character LanguageModel
    (fresh, fine-tuned) -> GRU -> softmax (no CRF), BIO tags, weighted loss, ModelTrainer.train and predict
    keeping embeddings on the GPU."""
    _flair(device)
    from flair.embeddings import FlairEmbeddings, StackedEmbeddings
    from flair.models import SequenceTagger

    corpus = _corpus()
    tags = corpus.make_label_dictionary("ner", add_unk=False)
    emb = StackedEmbeddings([FlairEmbeddings(_lm(True), fine_tune=True), FlairEmbeddings(_lm(False), fine_tune=True)])
    tagger = SequenceTagger(hidden_size=32, embeddings=emb, tag_dictionary=tags, tag_type="ner", use_crf=False,
                            rnn_type="GRU", tag_format="BIO", loss_weights={"PER": 2.0})
    return _model_workload("sequence_tagger_flair_embeddings", tagger, corpus, "ner",
                           trainer=_trainer_case(tagger, corpus, embeddings_storage_mode="gpu"),
                           predict_kw={"embedding_storage_mode": "gpu"})


def build_sequence_tagger_transformer(torch, device):
    """The fine-tuning recipe: TransformerWordEmbeddings (first-subtoken pooling, document context) -> linear
    -> softmax, ModelTrainer.fine_tune (AdamW, linear warm-up schedule)."""
    _flair(device)
    from flair.models import SequenceTagger

    corpus = _corpus()
    tags = corpus.make_label_dictionary("ner", add_unk=False)
    emb = _word_tf(torch, layers="-1", subtoken_pooling="first", use_context=True)
    tagger = SequenceTagger(hidden_size=32, embeddings=emb, tag_dictionary=tags, tag_type="ner", use_crf=False,
                            use_rnn=False, reproject_embeddings=False)
    return _model_workload("sequence_tagger_transformer", tagger, corpus, "ner",
                           trainer=_trainer_case(tagger, corpus, fine_tune=True), lr=5e-4)


def build_token_classifier(torch, device):
    """TokenClassifier (part of speech) on transformer word embeddings with mean subtoken pooling over all
    layers, and a span-encoding TokenClassifier for ner."""
    _flair(device)
    from flair.models import TokenClassifier

    corpus = _corpus()
    emb = _word_tf(torch, layers="all", layer_mean=True, subtoken_pooling="mean")
    pos = TokenClassifier(embeddings=emb, label_dictionary=corpus.make_label_dictionary("pos", add_unk=False),
                          label_type="pos")
    ner = TokenClassifier(embeddings=_word_tf(torch, layers="-1", subtoken_pooling="first_last"),
                          label_dictionary=corpus.make_label_dictionary("ner", add_unk=False), label_type="ner",
                          span_encoding="BIOES")
    test = list(corpus.test)
    return _model_workload("token_classifier", pos, corpus, "pos", lr=5e-4, cases=[
        ("ner-forward_loss", _step(ner, list(corpus.train)[:BS])),
        ("ner-predict", lambda: ner.predict(test, mini_batch_size=BS, return_probabilities_for_all_classes=True)),
        ("ner-evaluate", lambda: ner.evaluate(test, gold_label_type="ner", mini_batch_size=BS))])


def build_text_classifier_transformer(torch, device):
    """TextClassifier on TransformerDocumentEmbeddings (mean pooling), fine_tune, class probabilities."""
    _flair(device)
    from flair.models import TextClassifier

    corpus = _corpus()
    clf = TextClassifier(_doc_tf(torch, cls_pooling="mean"), label_type="topic",
                         label_dictionary=corpus.make_label_dictionary("topic", add_unk=False))
    test = list(corpus.test)
    return _model_workload("text_classifier_transformer", clf, corpus, "topic", lr=5e-4,
                           trainer=_trainer_case(clf, corpus, fine_tune=True),
                           cases=[("predict-all-probabilities", lambda: clf.predict(
                               test, mini_batch_size=BS, return_probabilities_for_all_classes=True))])


def build_text_classifier_rnn_multilabel(torch, device):
    """Multi-label TextClassifier on DocumentRNNEmbeddings (bidirectional GRU over one-hot + character
    embeddings), ModelTrainer.train."""
    _flair(device)
    from flair.embeddings import DocumentRNNEmbeddings
    from flair.models import TextClassifier

    corpus = _corpus(multi=True)
    emb = DocumentRNNEmbeddings([_onehot(corpus), _chars()], hidden_size=32, rnn_type="GRU", bidirectional=True)
    clf = TextClassifier(emb, label_type="topics", multi_label=True, multi_label_threshold=0.4,
                         label_dictionary=corpus.make_label_dictionary("topics", add_unk=False))
    return _model_workload("text_classifier_rnn_multilabel", clf, corpus, "topics", lr=1e-3,
                           trainer=_trainer_case(clf, corpus))


def build_classifier_decoders(torch, device):
    """TextClassifier heads other than the linear one: PrototypicalDecoder (euclidean, learned radius) on
    pooled one-hot embeddings, and DeepNCMDecoder (online class means) with its trainer plugin."""
    _flair(device)
    from flair.embeddings import DocumentPoolEmbeddings
    from flair.models import TextClassifier
    from flair.nn import DeepNCMDecoder, PrototypicalDecoder
    from flair.trainers import ModelTrainer
    from flair.trainers.plugins import DeepNCMPlugin

    corpus = _corpus()
    labels = corpus.make_label_dictionary("topic", add_unk=False)
    emb = DocumentPoolEmbeddings([_onehot(corpus)], fine_tune_mode="nonlinear")
    proto = TextClassifier(emb, label_type="topic", label_dictionary=labels,
                           decoder=PrototypicalDecoder(num_prototypes=len(labels), embeddings_size=emb.embedding_length,
                                                       use_radius=True))
    emb2 = DocumentPoolEmbeddings([_onehot(corpus)], pooling="max")
    ncm = TextClassifier(emb2, label_type="topic", label_dictionary=labels,
                         decoder=DeepNCMDecoder(label_dictionary=labels, embeddings_size=emb2.embedding_length,
                                                encoding_dim=16, use_encoder=True, mean_update_method="online"))
    test = list(corpus.test)

    def ncm_train():
        from flair.training_utils import store_embeddings

        store_embeddings(list(corpus.train) + list(corpus.dev) + list(corpus.test), "none")
        return ModelTrainer(ncm, corpus).train(tempfile.mkdtemp(prefix="flair-train-"), max_epochs=1,
                                               mini_batch_size=BS, learning_rate=0.1, plugins=[DeepNCMPlugin()])

    return _model_workload("classifier_decoders", proto, corpus, "topic", cases=[
        ("DeepNCM-train", ncm_train), ("DeepNCM-predict", lambda: ncm.predict(test, mini_batch_size=BS)),
        ("DeepNCM-evaluate", lambda: ncm.evaluate(test, gold_label_type="topic", mini_batch_size=BS))])


def build_document_embeddings(torch, device):
    """Document embeddings embedded one by one: pool (mean / min, linear fine-tuning), RNN (LSTM, attention-free),
    CNN, LM (the last state of a FlairEmbeddings LM), TF-IDF, transformer with max pooling; store_embeddings
    to the CPU and on the GPU."""
    _flair(device)
    from flair.embeddings import (DocumentCNNEmbeddings, DocumentLMEmbeddings, DocumentPoolEmbeddings,
                                  DocumentRNNEmbeddings, DocumentTFIDFEmbeddings, FlairEmbeddings)
    from flair.training_utils import store_embeddings

    corpus = _corpus()
    train = list(corpus.train)
    embs = {
        "DocumentPoolEmbeddings-mean": DocumentPoolEmbeddings([_onehot(corpus)], fine_tune_mode="linear"),
        "DocumentPoolEmbeddings-min": DocumentPoolEmbeddings([_onehot(corpus), _chars()], pooling="min"),
        "DocumentRNNEmbeddings-LSTM": DocumentRNNEmbeddings([_onehot(corpus)], hidden_size=16, rnn_type="LSTM"),
        "DocumentCNNEmbeddings": DocumentCNNEmbeddings([_onehot(corpus)], kernels=((8, 2), (8, 3))),
        "DocumentLMEmbeddings": DocumentLMEmbeddings([FlairEmbeddings(_lm(True))]),
        "DocumentTFIDFEmbeddings": DocumentTFIDFEmbeddings(train),
        "TransformerDocumentEmbeddings-max": _doc_tf(torch, cls_pooling="max", layers="-1,-2"),
    }
    for e in embs.values():
        e.to(device)

    def case(e):
        def run():
            sents = list(corpus.test)
            for s in sents:
                s.clear_embeddings()
            e.embed(sents)
            return [s.get_embedding() for s in sents]
        return run

    def store():
        sents = list(corpus.dev)
        embs["DocumentPoolEmbeddings-min"].embed(sents)
        store_embeddings(sents, "gpu")
        store_embeddings(sents, "cpu")
        store_embeddings(sents, "none")

    return Workload("document_embeddings", cases=[(n, case(e)) for n, e in embs.items()]
                    + [("store_embeddings", store)])


def build_regression_and_pairs(torch, device):
    """TextRegressor on pooled embeddings (the training step), and TextPairClassifier, TextPairRegressor and
    TextTripleClassifier on transformer document embeddings (forward_loss with backward, predict)."""
    _flair(device)
    from flair.data import DataPair, DataTriple
    from flair.embeddings import DocumentPoolEmbeddings
    from flair.models import TextPairClassifier, TextPairRegressor, TextRegressor, TextTripleClassifier
    from flair.data import Dictionary

    corpus = _corpus()
    reg = TextRegressor(DocumentPoolEmbeddings([_onehot(corpus)], fine_tune_mode="linear"), label_name="score")
    sents = _sentences(10, 7)
    pairs, triples = [], []
    for i in range(0, len(sents) - 2, 2):
        a, b, c = sents[i], sents[i + 1], sents[i + 2]
        p = DataPair(a, b)
        p.add_label("same_topic", "yes" if a.get_label("topic").value == b.get_label("topic").value else "no")
        p.add_label("similarity", str(round(random.Random(i).uniform(0, 1), 2)))
        pairs.append(p)
        t = DataTriple(a, b, c)
        t.add_label("same_topic", "yes" if a.get_label("topic").value == c.get_label("topic").value else "no")
        triples.append(t)
    yn = Dictionary(add_unk=False)
    yn.add_item("yes")
    yn.add_item("no")
    pair_clf = TextPairClassifier(_doc_tf(torch), label_type="same_topic", label_dictionary=yn)
    pair_sep = TextPairClassifier(_doc_tf(torch), label_type="same_topic", label_dictionary=yn, embed_separately=True)
    pair_reg = TextPairRegressor(_doc_tf(torch), label_type="similarity")
    triple = TextTripleClassifier(_doc_tf(torch), label_type="same_topic", label_dictionary=yn)

    def fit(model, data):
        return _step(model, data[:BS])

    return _model_workload("regression_and_pairs", reg, corpus, "score", cases=[
        ("TextPairClassifier-forward_loss", fit(pair_clf, pairs)),
        ("TextPairClassifier-predict", lambda: pair_clf.predict(pairs, mini_batch_size=BS)),
        ("TextPairClassifier-separately", fit(pair_sep, pairs)),
        ("TextPairRegressor-forward_loss", fit(pair_reg, pairs)),
        ("TextPairRegressor-evaluate", lambda: pair_reg.evaluate(pairs, gold_label_type="similarity",
                                                                 mini_batch_size=BS)),
        ("TextTripleClassifier-forward_loss", fit(triple, triples)),
        ("TextTripleClassifier-predict", lambda: triple.predict(triples, mini_batch_size=BS))])


def build_relation_classifier(torch, device):
    """RelationClassifier: entity pairs (PER, ORG) encoded with typed entity markers into new sentences
    (transform_corpus), a transformer document embedding of each, fine_tune; predict on raw sentences."""
    _flair(device)
    from flair.models import RelationClassifier
    from flair.models.relation_classifier_model import EntityMask, TypedEntityMarker

    corpus = _corpus()
    labels = corpus.make_label_dictionary("relation", add_unk=False)
    rc = RelationClassifier(embeddings=_doc_tf(torch), label_dictionary=labels, label_type="relation",
                            entity_label_types="ner", entity_pair_labels={("PER", "ORG"), ("ORG", "PER")},
                            encoding_strategy=TypedEntityMarker(), allow_unk_tag=False)
    encoded = rc.transform_corpus(corpus)
    rc2 = RelationClassifier(embeddings=_doc_tf(torch), label_dictionary=labels, label_type="relation",
                             entity_label_types={"ner": {"PER", "ORG"}}, encoding_strategy=EntityMask(),
                             allow_unk_tag=True, cross_augmentation=False)
    raw = _sentences(N_TEST, 2)
    masked = list(rc2.transform_corpus(_corpus()).train)
    return _model_workload("relation_classifier", rc, encoded, "relation", lr=5e-4,
                           trainer=_trainer_case(rc, encoded, fine_tune=True),
                           cases=[("predict-raw", lambda: rc.predict(raw, mini_batch_size=BS)),
                                  ("EntityMask-forward_loss", _step(rc2, masked[:BS])),
                                  ("EntityMask-predict-raw", lambda: rc2.predict(raw, mini_batch_size=BS))])


def build_relation_extractor_span_classifier(torch, device):
    """RelationExtractor (first_last pooling of both entities' tokens, entity-pair filters, trained on the gold
    pairs as in flair's tests) and SpanClassifier (entity linking of ner spans, with a candidate generator) on
    transformer word embeddings."""
    _flair(device)
    from flair.models import RelationExtractor, SpanClassifier
    from flair.models.entity_linker_model import CandidateGenerator

    corpus = _corpus()
    rel = RelationExtractor(embeddings=_word_tf(torch), label_type="relation", entity_label_type="ner",
                            entity_pair_filters=[("PER", "ORG"), ("ORG", "PER")], train_on_gold_pairs_only=True,
                            label_dictionary=corpus.make_label_dictionary("relation"))
    nel_dict = corpus.make_label_dictionary("nel", add_unk=True)
    cands = {}
    for names in ENT.values():
        for n in names:
            cands[n] = ["%s_%s" % (n, t.lower()) for t in ENT]
    nel = SpanClassifier(embeddings=_word_tf(torch, layers="-1"), label_dictionary=nel_dict, label_type="nel",
                         span_label_type="ner", pooling_operation="first_last",
                         candidates=CandidateGenerator(cands))
    test = list(corpus.test)
    return _model_workload("relation_extractor_span_classifier", rel, corpus, "relation", lr=5e-4, cases=[
        ("SpanClassifier-forward_loss", _step(nel, list(corpus.train)[:BS])),
        ("SpanClassifier-predict", lambda: nel.predict(test, mini_batch_size=BS)),
        ("SpanClassifier-evaluate", lambda: nel.evaluate(test, gold_label_type="nel", mini_batch_size=BS))])


def build_lemmatizer(torch, device):
    """Lemmatizer: a seq2seq character decoder with attention over the token's one-hot embedding (its character
    encoder puts the packing lengths on flair.device, which torch refuses on a GPU), greedy decoding (its beam
    search calls ``Token.add_tag``, which flair 0.15.1's Token no longer has)."""
    _flair(device)
    from flair.models import Lemmatizer

    corpus = _corpus()
    lem = Lemmatizer(embeddings=_onehot(corpus), label_type="lemma", rnn_input_size=16, rnn_hidden_size=32,
                     rnn_layers=1, encode_characters=False, char_dict=_char_dict(), use_attention=True, beam_size=1)
    return _model_workload("lemmatizer", lem, corpus, "lemma")


def build_tars(torch, device):
    """TARS: TARSClassifier (label names verbalised with the sentence, binary cross-label decisions) trained
    on topics, zero-shot prediction on new labels; TARSTagger on ner spans."""
    _flair(device)
    from flair.models import TARSClassifier, TARSTagger

    corpus = _corpus()
    tars = TARSClassifier(task_name="topic", label_dictionary=corpus.make_label_dictionary("topic", add_unk=False),
                          label_type="topic", embeddings=_doc_tf(torch), num_negative_labels_to_sample=2)
    tagger = TARSTagger(task_name="ner", label_dictionary=corpus.make_label_dictionary("ner", add_unk=False),
                        label_type="ner", embeddings=_word_tf(torch))
    test = list(corpus.test)
    return _model_workload("tars", tars, corpus, "topic", lr=5e-4, cases=[
        ("predict_zero_shot", lambda: tars.predict_zero_shot(_sentences(3, 9), ["weather", "markets"])),
        ("TARSTagger-forward_loss", _step(tagger, list(corpus.train)[:BS])),
        ("TARSTagger-predict", lambda: tagger.predict(test, mini_batch_size=BS)),
        ("TARSTagger-evaluate", lambda: tagger.evaluate(test, gold_label_type="ner", mini_batch_size=BS))])


def build_multitask(torch, device):
    """MultitaskModel from make_multitask_model_and_corpus: a TextClassifier and a SequenceTagger sharing one
    transformer (document + token embeddings), fine_tune on the MultiCorpus."""
    _flair(device)
    from flair.models import SequenceTagger, TextClassifier
    from flair.nn.multitask import make_multitask_model_and_corpus

    shared = _word_tf(torch, is_document_embedding=True)
    c1, c2 = _corpus(seed=0), _corpus(seed=10)
    m1 = TextClassifier(shared, label_type="topic", label_dictionary=c1.make_label_dictionary("topic", add_unk=False))
    m2 = SequenceTagger(hidden_size=16, embeddings=shared, tag_type="ner", use_rnn=False, use_crf=False,
                        tag_dictionary=c2.make_label_dictionary("ner", add_unk=False))
    model, multi = make_multitask_model_and_corpus([(m1, c1), (m2, c2)])
    return _model_workload("multitask", model, multi, "topic", lr=5e-4,
                           trainer=_trainer_case(model, multi, fine_tune=True),
                           cases=[])


def build_language_model(torch, device):
    """LanguageModelTrainer.train on a TextCorpus written here (character level, a train split, valid, test),
    then generate_text, calculate_perplexity and FlairEmbeddings of the trained model."""
    _flair(device)
    from flair.data import Sentence
    from flair.embeddings import FlairEmbeddings
    from flair.trainers.language_model_trainer import LanguageModelTrainer, TextCorpus

    root = tempfile.mkdtemp(prefix="flair-lm-")
    os.makedirs(os.path.join(root, "train"))
    text = [" ".join(s.to_tokenized_string() for s in _sentences(8, k)) for k in range(3)]
    with open(os.path.join(root, "train", "split_0"), "w") as fh:  # one split: after each, 1000 characters are
        fh.write(text[0] + "\n")  # generated one at a time for the log
    for name, k in (("valid.txt", 1), ("test.txt", 2)):
        with open(os.path.join(root, name), "w") as fh:
            fh.write(text[k] + "\n")
    lm = _lm(True, hidden=32)
    corpus = TextCorpus(root, lm.dictionary, lm.is_forward_lm, character_level=True)
    emb = FlairEmbeddings(lm)

    def train():
        return LanguageModelTrainer(lm, corpus).train(tempfile.mkdtemp(prefix="flair-lmtrain-"), sequence_length=24,
                                                      mini_batch_size=4, max_epochs=1, num_workers=0, patience=1)

    return Workload("language_model", cases=[
        ("LanguageModelTrainer.train", train),
        ("generate_text", lambda: lm.generate_text(prefix="the ", number_of_characters=24, temperature=0.8)),
        ("calculate_perplexity", lambda: lm.calculate_perplexity(text[2][:60])),
        ("FlairEmbeddings.embed", lambda: emb.embed([Sentence("Anna met Bert in Berlin"), Sentence("big markets")]))])


WORKLOADS = [build_sequence_tagger_crf, build_sequence_tagger_flair_embeddings, build_sequence_tagger_transformer,
             build_token_classifier, build_text_classifier_transformer, build_text_classifier_rnn_multilabel,
             build_classifier_decoders, build_document_embeddings, build_regression_and_pairs,
             build_relation_classifier, build_relation_extractor_span_classifier, build_lemmatizer, build_tars,
             build_multitask, build_language_model]
