"""The JAX reference of bench/bench_gpu_mlp.cpp: the same PINN training step in JAX with jit.

Network 2-50-50-50-50-1 tanh (Glorot-uniform weights, zero biases) behind the same input map
(the unit square onto [-1, 1]^2); loss = 1/(2N) Σ (Δu − f)² + λ/(2K) Σ (u − p)², λ = 100, with
f = sin πx sin πy and p = 0 (the seed problem); Δu by jax.hessian's trace per point (vmap); one
iteration = loss + gradient (jax.value_and_grad) + Adam (lr 1e-3, β = 0.9, 0.999, ε = 1e-8,
written out, as optax.adam does it).

Timed two ways, after a warm-up (compilation) run, with block_until_ready, median of 7 repeats
of 200 steps:
  loop = a Python loop over the jitted step (what PINN codes usually run);
  scan = 200 steps inside one jitted lax.scan (no per-step dispatch: the fair counterpart of
         rbfpde's 200-step CUDA graph).
A fixed batch (as the C++ bench); --fresh draws fresh uniform points every step inside the jit.

JAX's default float32 matmuls run on TF32 tensor cores on this GPU (10-bit mantissa); rbfpde's
float pass is full FP32 arithmetic. --highest sets jax_default_matmul_precision to "highest"
(true float32 dot products, the same arithmetic as rbfpde's) for a like-for-like figure.

Usage: python3 bench/jax_mlp.py [float32|float64|both] [--fresh] [--highest]
"""
import statistics
import sys
import time

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

STEPS, REPEATS = 200, 7
LAYERS = [2, 50, 50, 50, 50, 1]
LAM, LR, B1, B2, EPS = 100.0, 1e-3, 0.9, 0.999, 1e-8


def init_params(key, dtype):
    params = []
    for n_in, n_out in zip(LAYERS[:-1], LAYERS[1:]):
        key, sub = jax.random.split(key)
        lim = (6.0 / (n_in + n_out)) ** 0.5
        w = jax.random.uniform(sub, (n_out, n_in), dtype, -lim, lim)
        params.append((w, jnp.zeros((n_out,), dtype)))
    return params


def net(params, x):  # one point x ∈ [0, 1]^2 → u
    h = 2.0 * x - 1.0
    for w, b in params[:-1]:
        h = jnp.tanh(w @ h + b)
    w, b = params[-1]
    return (w @ h + b)[0]


def laplacian(params, x):
    return jnp.trace(jax.hessian(net, argnums=1)(params, x))


def loss_fn(params, xi, f, xb, p):
    e = jax.vmap(laplacian, in_axes=(None, 0))(params, xi) - f
    b = jax.vmap(net, in_axes=(None, 0))(params, xb) - p
    return 0.5 * jnp.mean(e * e) + 0.5 * LAM * jnp.mean(b * b)


def adam(params, grads, m, v, t):
    m = jax.tree_util.tree_map(lambda m, g: B1 * m + (1 - B1) * g, m, grads)
    v = jax.tree_util.tree_map(lambda v, g: B2 * v + (1 - B2) * g * g, v, grads)
    c1 = 1.0 / (1.0 - B1**t)
    c2 = 1.0 / (1.0 - B2**t)
    params = jax.tree_util.tree_map(
        lambda q, m, v: q - LR * (m * c1) / (jnp.sqrt(v * c2) + EPS), params, m, v)
    return params, m, v


def sample(key, n, k, dtype):
    k1, k2, k3 = jax.random.split(key, 3)
    xi = jax.random.uniform(k1, (n, 2), dtype)
    f = jnp.sin(jnp.pi * xi[:, 0]) * jnp.sin(jnp.pi * xi[:, 1])
    # Boundary: uniform on the square's perimeter.
    s = jax.random.uniform(k2, (k,), dtype) * 4.0
    side = jax.random.randint(k3, (k,), 0, 4)
    r = s - jnp.floor(s)
    x = jnp.where(side == 0, r, jnp.where(side == 1, 1.0, jnp.where(side == 2, 1.0 - r, 0.0)))
    y = jnp.where(side == 0, 0.0, jnp.where(side == 1, r, jnp.where(side == 2, 1.0, 1.0 - r)))
    xb = jnp.stack([x, y], axis=1).astype(dtype)
    return xi, f.astype(dtype), xb, jnp.zeros((k,), dtype)


def bench(dtype, n, k, fresh):
    key = jax.random.PRNGKey(0)
    params = init_params(key, dtype)
    m = jax.tree_util.tree_map(jnp.zeros_like, params)
    v = jax.tree_util.tree_map(jnp.zeros_like, params)
    batch = sample(jax.random.PRNGKey(1), n, k, dtype)

    def step(state, _):
        params, m, v, t, key = state
        if fresh:
            key, sub = jax.random.split(key)
            xi, f, xb, p = sample(sub, n, k, dtype)
        else:
            xi, f, xb, p = batch
        loss, grads = jax.value_and_grad(loss_fn)(params, xi, f, xb, p)
        t = t + 1
        params, m, v = adam(params, grads, m, v, t.astype(dtype))
        return (params, m, v, t, key), loss

    step_jit = jax.jit(step)
    scan_jit = jax.jit(lambda s: jax.lax.scan(step, s, None, length=STEPS))
    state = (params, m, v, jnp.array(0, jnp.int32), jax.random.PRNGKey(2))

    def run_loop(state):
        for _ in range(STEPS):
            state, loss = step_jit(state, None)
        jax.block_until_ready(state)
        return state, loss

    def run_scan(state):
        state, losses = scan_jit(state)
        jax.block_until_ready(state)
        return state, losses[-1]

    out = {}
    for name, fn in (("loop", run_loop), ("scan", run_scan)):
        s, loss = fn(state)  # warm-up: compiles
        rates = []
        for _ in range(REPEATS):
            t0 = time.perf_counter()
            s, loss = fn(s)
            rates.append(STEPS / (time.perf_counter() - t0))
        out[name] = (statistics.median(rates), float(loss))
    return out


def main():
    which = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else "both"
    fresh = "--fresh" in sys.argv
    precision = "highest" if "--highest" in sys.argv else "default"
    if precision == "highest":
        jax.config.update("jax_default_matmul_precision", "highest")
    dtypes = {"float32": [jnp.float32], "float64": [jnp.float64],
              "both": [jnp.float32, jnp.float64]}[which]
    print("jax", jax.__version__, "device:", jax.devices()[0].device_kind,
          "batch:", "fresh" if fresh else "fixed", "matmul precision:", precision)
    print("| precision | points N + K | it/s (loop) | it/s (scan 200) | last loss |")
    print("|---|---|---|---|---|")
    for n, k in ((1200, 120), (16384, 1024)):
        for dtype in dtypes:
            r = bench(dtype, n, k, fresh)
            print(f"| {jnp.dtype(dtype).name} | {n} + {k} | {r['loop'][0]:.0f} | "
                  f"{r['scan'][0]:.0f} | {r['scan'][1]:.3g} |", flush=True)


if __name__ == "__main__":
    main()
