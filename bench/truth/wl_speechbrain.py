"""speechbrain 1.1.2 workloads: recipes' building blocks (features, normalisation, ECAPA speaker
embeddings with AAM softmax, CRDNN + CTC, Transformer ASR with joint CTC/attention, Conv-TasNet with
PIT SI-SNR), its augmentations, and a whole ``Brain.fit`` epoch as recipes run it. Random init,
synthetic waveforms with relative lengths as speechbrain's padded batches give them.
"""

from __future__ import annotations

from harness import Workload

B, T, VOCAB = 4, 16000, 30


def _wavs(torch, device, gen, n=T):
    wav = torch.randn(B, n, device=device, generator=gen) * 0.1
    lens = torch.tensor([1.0, 0.9, 0.8, 0.95], device=device)  # relative lengths (PaddedBatch)
    return wav, lens


def _tokens(torch, device, gen, n=12):
    tokens = torch.randint(1, VOCAB, (B, n), device=device, generator=gen)
    return tokens, torch.tensor([1.0, 0.75, 0.9, 0.6], device=device)


def build_ecapa_aam(torch, device):
    from speechbrain.lobes.features import Fbank
    from speechbrain.lobes.models.ECAPA_TDNN import ECAPA_TDNN, Classifier
    from speechbrain.nnet.losses import AdditiveAngularMargin, LogSoftmaxWrapper
    from speechbrain.processing.features import InputNormalization

    fbank = Fbank(n_mels=40).to(device)
    norm = InputNormalization(norm_type="sentence", std_norm=False).to(device)
    emb = ECAPA_TDNN(40, lin_neurons=96, channels=[64, 64, 64, 64, 192]).to(device)
    cls = Classifier(input_size=96, out_neurons=10).to(device)
    loss = LogSoftmaxWrapper(AdditiveAngularMargin(margin=0.2, scale=30))
    gen = torch.Generator(device=device).manual_seed(0)

    def embed():
        wav, lens = _wavs(torch, device, gen)
        feats = norm(fbank(wav), lens)
        return emb(feats, lens), lens

    def train():
        e, _ = embed()
        spk = torch.randint(0, 10, (B, 1), device=device, generator=gen)
        return loss(cls(e), spk)

    return Workload("ecapa_aam", train=train, modules=[fbank, norm, emb, cls], eval=embed)


def build_crdnn_ctc(torch, device):
    import speechbrain as sb
    from speechbrain.decoders.ctc import ctc_greedy_decode
    from speechbrain.lobes.features import Fbank
    from speechbrain.lobes.models.CRDNN import CRDNN
    from speechbrain.nnet.linear import Linear

    fbank = Fbank(n_mels=40).to(device)
    enc = CRDNN(input_size=40, cnn_blocks=1, cnn_channels=(16,), time_pooling=True, rnn_class=sb.nnet.RNN.LSTM,
                rnn_layers=1, rnn_neurons=64, dnn_blocks=1, dnn_neurons=64).to(device)
    lin = Linear(input_size=64, n_neurons=VOCAB).to(device)
    gen = torch.Generator(device=device).manual_seed(0)

    def forward():
        wav, lens = _wavs(torch, device, gen)
        return torch.log_softmax(lin(enc(fbank(wav))), dim=-1), lens

    def train():
        logp, lens = forward()
        tokens, tok_lens = _tokens(torch, device, gen)
        return sb.nnet.losses.ctc_loss(logp, tokens, lens, tok_lens, blank_index=0)

    def evaluate():
        logp, lens = forward()
        return ctc_greedy_decode(logp, lens, blank_id=0)

    return Workload("crdnn_ctc", train=train, modules=[fbank, enc, lin], eval=evaluate)


def build_transformer_asr(torch, device):
    """Joint CTC/attention training as the LibriSpeech transformer recipe computes it."""
    import speechbrain as sb
    from speechbrain.lobes.features import Fbank
    from speechbrain.lobes.models.transformer.TransformerASR import TransformerASR
    from speechbrain.nnet.linear import Linear

    fbank = Fbank(n_mels=40).to(device)
    asr = TransformerASR(VOCAB, 40, d_model=64, nhead=4, num_encoder_layers=2, num_decoder_layers=2, d_ffn=128,
                         dropout=0.1).to(device)
    ctc_lin = Linear(input_size=64, n_neurons=VOCAB).to(device)
    seq_lin = Linear(input_size=64, n_neurons=VOCAB).to(device)
    gen = torch.Generator(device=device).manual_seed(0)

    def train():
        wav, lens = _wavs(torch, device, gen)
        tokens, tok_lens = _tokens(torch, device, gen)
        bos = torch.cat([torch.zeros(B, 1, dtype=tokens.dtype, device=device), tokens], dim=1)
        eos = torch.cat([tokens, torch.zeros(B, 1, dtype=tokens.dtype, device=device)], dim=1)
        enc, dec = asr(fbank(wav), bos, lens, pad_idx=0)
        p_ctc = torch.log_softmax(ctc_lin(enc), dim=-1)
        p_seq = torch.log_softmax(seq_lin(dec), dim=-1)
        ctc = sb.nnet.losses.ctc_loss(p_ctc, tokens, lens, tok_lens, blank_index=0)
        att = sb.nnet.losses.nll_loss(p_seq, eos, length=tok_lens, label_smoothing=0.1)
        return 0.3 * ctc + 0.7 * att

    def evaluate():
        wav, lens = _wavs(torch, device, gen)
        return asr.encode(fbank(wav), lens)

    return Workload("transformer_asr", train=train, modules=[fbank, asr, ctc_lin, seq_lin], eval=evaluate)


def build_convtasnet_pit(torch, device):
    from speechbrain.lobes.models.conv_tasnet import MaskNet
    from speechbrain.lobes.models.dual_path import Decoder, Encoder
    from speechbrain.nnet.losses import get_si_snr_with_pitwrapper

    enc = Encoder(kernel_size=16, out_channels=64).to(device)
    mask = MaskNet(N=64, B=32, H=64, P=3, X=2, R=1, C=2, norm_type="gLN", causal=False,
                   mask_nonlinear="relu").to(device)
    dec = Decoder(in_channels=64, out_channels=1, kernel_size=16, stride=8, bias=False).to(device)
    gen = torch.Generator(device=device).manual_seed(0)

    def separate(mix):
        w = enc(mix)
        m = mask(w)
        est = torch.stack([dec(w * m[i]) for i in range(2)], dim=-1)
        return est[:, : mix.shape[1]]

    def train():
        sources = torch.randn(B, 8000, 2, device=device, generator=gen) * 0.1
        est = separate(sources.sum(-1))
        return get_si_snr_with_pitwrapper(sources, est).mean()

    return Workload("convtasnet_pit", train=train, modules=[enc, mask, dec],
                    eval=lambda: separate(torch.randn(B, 8000, device=device, generator=gen)))


def build_augment(torch, device):
    """Waveform and spectrogram augmentations, alone and through the Augmenter."""
    from speechbrain.augment import freq_domain as F
    from speechbrain.augment import time_domain as TD
    from speechbrain.augment.augmenter import Augmenter
    from speechbrain.lobes.features import Fbank

    gen = torch.Generator(device=device).manual_seed(0)
    fbank = Fbank(n_mels=40).to(device)
    wave = {
        "SpeedPerturb": TD.SpeedPerturb(orig_freq=16000, speeds=[90, 100, 110]),
        "Resample": TD.Resample(orig_freq=16000, new_freq=8000),
        "DropFreq": TD.DropFreq(),
        "DropChunk": TD.DropChunk(drop_length_low=100, drop_length_high=1000),
        "FastDropChunk": TD.FastDropChunk(drop_length_low=100, drop_length_high=1000),
        "DoClip": TD.DoClip(),
        "RandAmp": TD.RandAmp(),
        "DropBitResolution": TD.DropBitResolution(),
        "SignFlip": TD.SignFlip(flip_prob=1.0),
        "AddNoise-white": TD.AddNoise(),
    }
    cases = []
    for name, aug in wave.items():
        aug = aug.to(device)

        def run(aug=aug, name=name):
            wav, lens = _wavs(torch, device, gen)
            if name in ("DropChunk", "AddNoise-white"):
                return aug(wav, lens)
            return aug(wav)
        cases.append((name, run))
    spec = {"SpectrogramDrop": F.SpectrogramDrop(), "Warping": F.Warping(), "RandomShift": F.RandomShift(
        min_shift=-5, max_shift=5, dim=1)}
    for name, aug in spec.items():
        def run_spec(aug=aug, name=name):
            wav, lens = _wavs(torch, device, gen)
            feats = fbank(wav)
            return aug(feats, lens) if name == "RandomShift" else aug(feats)
        cases.append((name, run_spec))
    augmenter = Augmenter(parallel_augment=True, concat_original=True, min_augmentations=2, max_augmentations=3,
                          augmentations=[TD.SpeedPerturb(orig_freq=16000, speeds=[95, 100, 105]), TD.DropFreq(),
                                         TD.DropChunk(drop_length_low=100, drop_length_high=1000)])
    cases.append(("Augmenter", lambda: augmenter(*_wavs(torch, device, gen))))
    return Workload("augment", cases=cases)


def build_brain_fit(torch, device):
    """A whole epoch through speechbrain.core.Brain.fit (train + valid), as every recipe runs it."""
    import speechbrain as sb
    from speechbrain.lobes.features import Fbank
    from speechbrain.lobes.models.CRDNN import CRDNN
    from speechbrain.nnet.linear import Linear
    from speechbrain.utils.epoch_loop import EpochCounter

    gen = torch.Generator(device=device).manual_seed(0)

    class CTCBrain(sb.Brain):
        def compute_forward(self, batch, stage):
            wav, lens, _tokens_, _tok_lens = batch
            feats = self.modules.norm(self.hparams.fbank(wav), lens)
            return torch.log_softmax(self.modules.lin(self.modules.enc(feats)), dim=-1), lens

        def compute_objectives(self, predictions, batch, stage):
            logp, lens = predictions
            _wav, _lens, tokens, tok_lens = batch
            return sb.nnet.losses.ctc_loss(logp, tokens, lens, tok_lens, blank_index=0)

    from speechbrain.processing.features import InputNormalization

    modules = {"enc": CRDNN(input_size=40, cnn_blocks=1, cnn_channels=(16,), rnn_class=sb.nnet.RNN.GRU, rnn_layers=1,
                            rnn_neurons=64, dnn_blocks=1, dnn_neurons=64),
               "lin": Linear(input_size=64, n_neurons=VOCAB), "norm": InputNormalization()}
    brain = CTCBrain(modules=modules, opt_class=lambda p: torch.optim.Adam(p, lr=1e-3),
                     hparams={"fbank": Fbank(n_mels=40).to(device)},
                     run_opts={"device": str(device), "noprogressbar": True})
    batches = [(*_wavs(torch, device, gen), *_tokens(torch, device, gen)) for _ in range(3)]
    loader = torch.utils.data.DataLoader(batches, batch_size=None)

    def epoch():
        brain.fit(EpochCounter(1), loader, loader)
        return brain.evaluate(loader)

    return Workload("brain_fit", cases=[("Brain.fit+evaluate", epoch)])


WORKLOADS = [build_ecapa_aam, build_crdnn_ctc, build_transformer_asr, build_convtasnet_pit, build_augment,
             build_brain_fit]
