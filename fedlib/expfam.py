"""The FedLog model (Sections 3.2-3.4): sufficient statistics, log-partition, posterior, MAP head.

phi in R^m has phi_0 = 1; eta in R^{C x m} is the head (row y = eta_y).

  T(phi, y)   = phi (x) e_y                                             (Eq. 2)
  A(eta)      = log sum_y exp(||eta_y||^2 / 4)                           (Eq. 9)
  log posterior kernel  = <eta, chi + T> - (nu + n) A(eta)               (Eqs. 11-12)

The MAP (Eq. 12) is the maximum of a strictly concave function. Setting its gradient
S_y - N p_y eta_y / 2 to zero (S = chi + T, N = nu + n, p = softmax(||eta_y||^2/4)) gives
eta_y = 2 S_y / (N p_y), and with a_y = ||eta_y||^2/4, r_y = ||S_y||^2 / N^2, L = log sum exp(a):
a_y = W(2 r_y e^{2L}) / 2 (Lambert W), with L the root of  log sum_y exp(a_y(L)) = L,
a strictly decreasing function of L. `map_head` solves that scalar equation by bisection,
so the head is exact to the tolerance. `map_head_gradient` is the paper's gradient ascent.

Since ||eta_y||^2 / 4 = a_y at the optimum, eta_y = 2 sqrt(a_y) S_y / ||S_y||: a class with an all-zero statistic
(nobody holds it) gets exactly eta_y = 0, also when p_y = e^{a_y - L} underflows for large statistics, where
2 S_y / (N p_y) would be 0/0.
"""
from __future__ import annotations

import math

import numpy as np
import torch


def with_constant(phi: torch.Tensor) -> torch.Tensor:
    """Prepend the constant feature 1: [..., m-1] -> [..., m]."""
    return torch.cat([torch.ones_like(phi[..., :1]), phi], dim=-1)


def sufficient_statistics(phi: torch.Tensor, y: torch.Tensor, num_classes: int,
                          valid: torch.Tensor | None = None) -> torch.Tensor:
    """sum_i [1, phi_i] (x) e_{y_i} as a [..., C, m] tensor; phi [..., n, m-1] has no constant yet."""
    onehot = torch.nn.functional.one_hot(y, num_classes).to(phi.dtype)
    if valid is not None:
        onehot = onehot * valid.unsqueeze(-1).to(phi.dtype)
    return torch.einsum("...ic,...im->...cm", onehot, with_constant(phi))


def head_to_eta(weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return torch.cat([bias.unsqueeze(-1), weight], dim=-1)


def eta_to_head(eta: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(weight, bias) of the nn.Linear head that computes eta_y^T [1, phi]."""
    return eta[..., 1:], eta[..., 0]


def log_partition(eta: torch.Tensor) -> torch.Tensor:
    """Eq. 9."""
    return torch.logsumexp((eta ** 2).sum(-1) / 4, dim=-1)


def log_partition_numeric(eta: np.ndarray, half_width: float = 12.0, points: int | None = None) -> float:
    """Eq. 9's left side by quadrature over phi in [-w, w]^m (m <= 3): the check of the closed form."""
    eta = np.asarray(eta, dtype=np.float64)
    C, m = eta.shape
    points = points or {1: 2001, 2: 401}.get(m, 121)
    grid = np.linspace(-half_width, half_width, points)
    w = np.full(points, grid[1] - grid[0])
    w[[0, -1]] /= 2  # trapezoid rule
    mesh = np.stack(np.meshgrid(*([grid] * m), indexing="ij"), -1).reshape(-1, m)
    weight = np.prod(np.stack(np.meshgrid(*([w] * m), indexing="ij"), -1).reshape(-1, m), axis=1)
    total = 0.0
    for y in range(C):
        total += np.sum(weight * np.exp(mesh @ eta[y] - (mesh ** 2).sum(1))) / math.sqrt(math.pi ** m)
    return math.log(total)


def log_posterior(eta: torch.Tensor, T: torch.Tensor, n, chi: torch.Tensor | float = 0.0, nu: float = 1.0):
    """log Pr(eta; chi + T, nu + n) up to the normaliser f (Eqs. 11-12)."""
    return (eta * (T + chi)).sum() - (nu + n) * log_partition(eta)


def lambertw_of_exp(log_z: np.ndarray, iters: int = 60) -> np.ndarray:
    """W(e^log_z) for real log_z (-inf allowed), without forming e^log_z: Newton on u + e^u = log_z, W = e^u."""
    log_z = np.asarray(log_z, dtype=np.float64)
    finite = np.isfinite(log_z)
    lz = np.where(finite, log_z, 0.0)
    u = np.where(lz < 1, lz, np.log(np.maximum(lz, 1.0)))
    for _ in range(iters):
        eu = np.exp(u)
        u = u - (eu + u - lz) / (eu + 1)
    return np.where(finite, np.exp(u), 0.0)


def map_head(T: torch.Tensor, n, chi: torch.Tensor | float = 0.0, nu: float = 1.0, tol: float = 1e-13) -> torch.Tensor:
    """The exact MAP of Eq. 12 (see the module docstring). T [C, m], n the total count."""
    S = (T + chi).double().cpu()
    N = float(nu + n)
    if not N > 0:
        raise ValueError(f"nu + n must be positive to solve the head, got {N}")
    with np.errstate(divide="ignore"):
        log_2r = np.log(2 * ((S ** 2).sum(-1) / N ** 2).numpy())  # [C], -inf for an all-zero statistic

    def a_of(L):
        return lambertw_of_exp(log_2r + 2 * L) / 2

    def excess(L):  # log sum exp(a(L)) - L: strictly decreasing, >= 0 at L = log C since every a_y >= 0
        return np.logaddexp.reduce(a_of(L)) - L

    lo = math.log(len(log_2r))
    step = 1.0
    while excess(lo + step) > 0:
        lo, step = lo + step, 2 * step
    hi = lo + step
    while hi - lo > tol * max(1.0, abs(hi)):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if excess(mid) > 0 else (lo, mid)
    L = (lo + hi) / 2
    a = a_of(L)
    p = torch.from_numpy(np.exp(a - L)).unsqueeze(-1)
    eta = 2 * S / (N * p)
    underflow = p.squeeze(-1) < 1e-300  # e.g. classes nobody holds once L > 690: use |eta_y| = 2 sqrt(a_y)
    if bool(underflow.any()):
        norm = S.norm(dim=-1, keepdim=True)
        stable = torch.where(norm > 0, 2 * torch.from_numpy(np.sqrt(a)).unsqueeze(-1) * S / norm.clamp(min=1e-300),
                             torch.zeros_like(S))
        eta = torch.where(underflow.unsqueeze(-1), stable, eta)
    return eta.to(dtype=T.dtype, device=T.device)


def map_head_gradient(T: torch.Tensor, n, eta0: torch.Tensor, chi=0.0, nu: float = 1.0, lr: float = 0.01,
                      steps: int = 100) -> torch.Tensor:
    """The paper's head update: Adam ascent (head lr 0.01) on the log posterior divided by nu + n,
    warm-started from the current head."""
    eta = eta0.detach().clone().double().requires_grad_(True)
    opt = torch.optim.Adam([eta], lr=lr)
    Td, N = (T + chi).double(), float(nu + n)
    for _ in range(steps):
        opt.zero_grad()
        loss = -((eta * Td).sum() / N - log_partition(eta))
        loss.backward()
        opt.step()
    return eta.detach().to(T.dtype)


def same_statistic_twin(phi: torch.Tensor, y: torch.Tensor, shift: float = 1.0, seed: int = 0) -> torch.Tensor:
    """A different set of representations with the same labels and the same summed statistic (Thm. 2): within
    each class, pairs of points move by +d and -d for a random direction d, so every class sum is unchanged."""
    g = torch.Generator().manual_seed(seed)
    twin = phi.clone()
    for c in torch.unique(y):
        idx = torch.nonzero(y == c).flatten()
        for a, b in zip(idx[0::2], idx[1::2]):
            d = torch.randn(phi.shape[-1], generator=g, dtype=phi.dtype) * shift
            twin[a] += d
            twin[b] -= d
    return twin
