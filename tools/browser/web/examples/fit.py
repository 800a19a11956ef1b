"""Gradient descent through a simulation.

Find the push that makes each puck stop at its target: the gradient of the loss flows back
through a loop whose trip count is a run-time argument (gr.Tape), and the loss goes down.
"""
import gfxrt as gr

gr.init()

pucks, steps, dt, drag = 8, 200, 0.01, 1.0
v0 = gr.field(gr.f32, pucks, needs_grad=True)     # the initial speeds we fit
target = gr.field(gr.f32, pucks)
loss = gr.field(gr.f32, (), needs_grad=True)
target.from_numpy([0.5 + 0.2 * i for i in range(pucks)])  # a list: no numpy needed
v0.fill(1.0)


@gr.kernel
def slide(steps: gr.i32):
    for k in range(pucks):          # the outer loop runs in parallel, one puck a thread
        v, x = v0[k], 0.0
        for _ in range(steps):      # a loop whose trip count is known at run time only
            v -= drag * v * abs(v) * dt
            x += v * dt
        loss[None] += (x - target[k]) ** 2


@gr.kernel
def descend(rate: gr.f32):
    for k in v0:
        v0[k] -= rate * v0.grad[k]


losses = []
for _ in range(50):              # 50 steps of gradient descent
    loss[None] = 0.0
    with gr.Tape(loss=loss):        # records slide, then runs its gradient: v0.grad = d loss / d v0
        slide(steps)
    losses.append(loss[None])
    descend(0.5)

show(losses, "loss")
print(f"loss {losses[0]:.4f} -> {losses[-1]:.6f}")
print("pushes:", [round(v, 3) for v in v0.to_list()])
