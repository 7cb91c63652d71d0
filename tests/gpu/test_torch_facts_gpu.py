"""Facts inference takes about torch's results, checked on a GPU (inference/torch_api.py)."""


def test_pad_packed_sequence_lengths_on_the_host(cuda_torch):
    torch = cuda_torch
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    x = torch.randn(3, 5, 2, device="cuda")
    packed = pack_padded_sequence(x, [5, 3, 2], batch_first=True)
    padded, lengths = pad_packed_sequence(packed, batch_first=True)
    assert padded.device.type == "cuda"
    assert lengths.device.type == "cpu" and lengths.dtype == torch.int64 and lengths.dim() == 1
