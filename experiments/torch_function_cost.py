"""What a kernel as a torch operation costs (issue 24 item 6): forward + backward of
`gr.ad.torch_function` on CPU tensors, against the same kernel and its gradient on gr.ndarrays
(with the gradient read back) and torch's own `(x * x).sum().backward()`.

The torch_function path copies the tensors to the device and back (values, then gradients) and
waits for two readbacks per step; the gr.ndarray path waits for one.
Run: python -m experiments.torch_function_cost
"""
import time

import torch

import gfxrt as gr

ND = gr.types.ndarray(dtype=gr.f32, ndim=1)


@gr.kernel
def sq(x: ND, y: ND):
    for i in x:
        y[i] = x[i] * x[i]


op = gr.ad.torch_function(sq, outputs=[lambda x: x.shape])


def timed(f, reps: int = 20) -> float:
    f()
    f()
    t0 = time.perf_counter()
    for _ in range(reps):
        f()
    return (time.perf_counter() - t0) / reps * 1e3


def main():
    print("adapter:", gr.device().name)
    for n in (1 << 10, 1 << 20):
        x = torch.rand(n, requires_grad=True)
        xa, ya = gr.ndarray(gr.f32, n, needs_grad=True), gr.ndarray(gr.f32, n, needs_grad=True)

        def via_ndarrays(xa=xa, ya=ya):
            sq(xa, ya)
            ya.grad.fill(1)
            sq.grad(xa, ya)
            xa.grad.to_numpy()

        for name, f in (("torch_function", lambda x=x: op(x).sum().backward()),
                        ("gr.ndarray k + k.grad + readback", via_ndarrays),
                        ("torch alone", lambda x=x: (x * x).sum().backward())):
            print(f"n={n:>8} {name:35s} {timed(f):8.2f} ms")


if __name__ == "__main__":
    main()
