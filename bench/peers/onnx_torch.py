"""An ONNX graph of the operators fixq imports as an eager torch module (for
bench/peers/torch_model.py): weights as nn.Linear / nn.GRU submodules, so that
torch.quantization.quantize_dynamic quantizes them; everything else as torch functions.
Constants are folded once, values that depend on the inputs' shapes alone once per input
shape. Supported: Gemm, MatMul (a constant weight: nn.Linear, with a following Add of a
constant bias folded in), Conv (1-D), GRU (both cells, every direction, layout 0 and 1),
Add, Sub, Mul, Div, Tanh, Sigmoid, Relu, Softmax, Concat, Split, Slice, Pad, Transpose,
Reshape, Squeeze, Unsqueeze, Identity, Shape, Gather, Cast, Constant, ConstantOfShape."""
import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper
from torch import nn

_DTYPES = {1: torch.float32, 6: torch.int32, 7: torch.int64, 9: torch.bool, 11: torch.float64}
_LAYOUT = {"Identity", "Transpose", "Squeeze", "Unsqueeze", "Reshape"}


def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


class ResetBeforeGru(nn.Module):
    """ONNX's default GRU cell (linear_before_reset=0), one direction: r multiplies h before
    the recurrent product. Its products are nn.Linear, as quantize_dynamic needs."""

    def __init__(self, w, r, b, reverse):
        super().__init__()
        h = r.shape[1]
        self.h, self.reverse = h, reverse
        self.wx = nn.Linear(w.shape[1], 3 * h)  # z, r, h
        self.rzr = nn.Linear(h, 2 * h)
        self.rh = nn.Linear(h, h)
        with torch.no_grad():
            self.wx.weight.copy_(w)
            self.wx.bias.copy_(b[: 3 * h])
            self.rzr.weight.copy_(r[: 2 * h])
            self.rzr.bias.copy_(b[3 * h: 5 * h])
            self.rh.weight.copy_(r[2 * h:])
            self.rh.bias.copy_(b[5 * h:])

    def forward(self, x, h):  # x [T, B, C], h [B, H]
        gx = self.wx(x)
        ys = []
        steps = range(x.shape[0] - 1, -1, -1) if self.reverse else range(x.shape[0])
        for t in steps:
            zr = torch.sigmoid(gx[t, :, : 2 * self.h] + self.rzr(h))
            z, r = zr[:, : self.h], zr[:, self.h:]
            n = torch.tanh(gx[t, :, 2 * self.h:] + self.rh(r * h))
            h = (1 - z) * n + z * h
            ys.append(h)
        if self.reverse:
            ys.reverse()
        return torch.stack(ys), h


class OnnxModule(nn.Module):
    def __init__(self, proto):
        super().__init__()
        g = proto.graph
        self.consts = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()) for t in g.initializer}
        self.input_names = [i.name for i in g.input if i.name not in self.consts]
        self.output_names = [o.name for o in g.output]
        self.nodes = list(g.node)
        self.mods = nn.ModuleDict()
        self.reverse = set()  # GRU keys of direction "reverse" (nn.GRU runs forward)
        consumers = {}
        for n in self.nodes:
            for i in n.input:
                consumers.setdefault(i, []).append(n)
        for o in self.output_names:
            consumers.setdefault(o, []).append(None)
        # Constants folded now (kind "const"); values of the inputs' shapes alone ("shape").
        self.kind = {n: "const" for n in self.consts}
        for n in self.input_names:
            self.kind[n] = "data"
        self.skip = set()
        self.plan = []  # (node, kind)
        for idx, n in enumerate(self.nodes):
            ins = [i for i in n.input if i]
            kinds = {self.kind[i] for i in ins}
            if n.op_type == "Shape":
                k = "shape" if "const" not in kinds or kinds == {"const"} else "shape"
                k = "const" if kinds == {"const"} else "shape"
            elif "data" in kinds:
                k = "data"
            elif "shape" in kinds:
                k = "shape"
            else:
                k = "const"
            for o in n.output:
                self.kind[o] = k
            self.plan.append((n, k))
        env = dict(self.consts)
        for n, k in self.plan:
            if k == "const":
                self._run(n, env)
        self.consts = {name: v for name, v in env.items() if self.kind.get(name) == "const"}
        # Modules for the weights.
        for idx, (n, k) in enumerate(self.plan):
            key = f"n{idx}"
            a = _attrs(n)
            if n.op_type == "Gemm" and n.input[1] in self.consts and not a.get("transA", 0):
                w = self.consts[n.input[1]].float()
                w = w if a.get("transB", 0) else w.t()
                bias = self.consts.get(n.input[2]) if len(n.input) > 2 and n.input[2] else None
                lin = nn.Linear(w.shape[1], w.shape[0], bias=bias is not None)
                with torch.no_grad():
                    lin.weight.copy_(w * a.get("alpha", 1.0))
                    if bias is not None:
                        lin.bias.copy_((bias.float() * a.get("beta", 1.0)).reshape(-1).expand(w.shape[0]))
                self.mods[key] = lin
            elif n.op_type == "MatMul" and n.input[1] in self.consts and self.consts[n.input[1]].dim() == 2:
                w = self.consts[n.input[1]].float().t()
                users = consumers.get(n.output[0], [])
                bias = None
                if len(users) == 1 and users[0] is not None and users[0].op_type == "Add":
                    add = users[0]
                    other = add.input[1] if add.input[0] == n.output[0] else add.input[0]
                    if other in self.consts and self.consts[other].numel() == w.shape[0]:
                        bias = self.consts[other].float().reshape(-1)
                        self.skip.add(id(add))
                        self.fold_add = getattr(self, "fold_add", {})
                        self.fold_add[id(n)] = add.output[0]
                lin = nn.Linear(w.shape[1], w.shape[0], bias=bias is not None)
                with torch.no_grad():
                    lin.weight.copy_(w)
                    if bias is not None:
                        lin.bias.copy_(bias)
                self.mods[key] = lin
            elif n.op_type == "GRU":
                W, R = self.consts[n.input[1]].float(), self.consts[n.input[2]].float()
                D, H3, C = W.shape
                H = H3 // 3
                B = self.consts[n.input[3]].float() if len(n.input) > 3 and n.input[3] else torch.zeros(D, 6 * H)
                direction = a.get("direction", b"forward")
                direction = direction.decode() if isinstance(direction, bytes) else direction
                if a.get("linear_before_reset", 0):
                    gru = nn.GRU(C, H, bidirectional=(D == 2))
                    perm = torch.cat([torch.arange(H, 2 * H), torch.arange(0, H), torch.arange(2 * H, 3 * H)])
                    with torch.no_grad():
                        for d in range(D):
                            sfx = "_reverse" if d == 1 else ""
                            getattr(gru, "weight_ih_l0" + sfx).copy_(W[d][perm])
                            getattr(gru, "weight_hh_l0" + sfx).copy_(R[d][perm])
                            getattr(gru, "bias_ih_l0" + sfx).copy_(B[d][: 3 * H][perm])
                            getattr(gru, "bias_hh_l0" + sfx).copy_(B[d][3 * H:][perm])
                    if direction == "reverse":
                        self.reverse.add(key)
                    self.mods[key] = gru
                else:
                    self.mods[key] = nn.ModuleList(
                        [ResetBeforeGru(W[d], R[d], B[d], direction == "reverse" or d == 1) for d in range(D)])
        self.cache = {}

    def state_pairs(self):
        """(graph input index, graph output index) of the GRU states a stream would carry:
        the graph inputs that reach a GRU's initial_h and the outputs made from a Y_h."""
        producer = {o: n for n in self.nodes for o in n.output}

        def origin(name):
            while name in producer and producer[name].op_type in _LAYOUT:
                name = producer[name].input[0]
            return producer.get(name), name

        yh = [i for i, o in enumerate(self.output_names)
              if origin(o)[0] is not None and origin(o)[0].op_type == "GRU" and origin(o)[0].output[1] == origin(o)[1]]
        hs = []
        for n in self.nodes:
            if n.op_type == "GRU" and len(n.input) > 5 and n.input[5]:
                src = origin(n.input[5])[1]
                if src in self.input_names:
                    hs.append(self.input_names.index(src))
        return list(zip(hs, yh)) if len(hs) == len(yh) else []

    def forward(self, *feeds):
        env = dict(self.consts)
        for name, v in zip(self.input_names, feeds):
            env[name] = v
        key = tuple(tuple(v.shape) for v in feeds)
        cached = self.cache.get(key)
        if cached is not None:
            env.update(cached)
        for idx, (n, k) in enumerate(self.plan):
            if k == "const" or (k == "shape" and cached is not None) or id(n) in self.skip:
                continue
            self._run(n, env, f"n{idx}")
        if cached is None:
            self.cache[key] = {name: env[name] for name, kk in self.kind.items() if kk == "shape" and name in env}
        return tuple(env[o] for o in self.output_names)

    def _run(self, n, env, key=None):
        op, a = n.op_type, _attrs(n)
        x = [env[i] if i else None for i in n.input]
        out = None
        if op in ("Identity",):
            out = x[0]
        elif op == "Cast":
            out = x[0].to(_DTYPES[a["to"]])
        elif op == "Constant":
            if "value" in a:
                out = torch.from_numpy(numpy_helper.to_array(a["value"]).copy())
            elif "value_ints" in a:
                out = torch.tensor(a["value_ints"], dtype=torch.int64)
            elif "value_int" in a:
                out = torch.tensor(a["value_int"], dtype=torch.int64)
            elif "value_floats" in a:
                out = torch.tensor(a["value_floats"], dtype=torch.float32)
            else:
                out = torch.tensor(a["value_float"], dtype=torch.float32)
        elif op == "ConstantOfShape":
            v = torch.from_numpy(numpy_helper.to_array(a["value"]).copy()) if "value" in a else torch.zeros(1)
            out = torch.full(tuple(int(s) for s in x[0].tolist()), v.reshape(-1)[0].item(), dtype=v.dtype)
        elif op == "Shape":
            s = list(x[0].shape)[a.get("start", 0):a.get("end", None)]
            out = torch.tensor(s, dtype=torch.int64)
        elif op == "Gather":
            axis = a.get("axis", 0) % x[0].dim()
            idx = x[1].long()
            idx = torch.where(idx < 0, idx + x[0].shape[axis], idx)
            out = x[0].index_select(axis, idx.reshape(-1)).reshape(
                x[0].shape[:axis] + idx.shape + x[0].shape[axis + 1:])
        elif op == "Unsqueeze":
            axes = a["axes"] if "axes" in a else x[1].tolist()
            out = x[0]
            rank = out.dim() + len(axes)
            for ax in sorted(ax % rank for ax in axes):
                out = out.unsqueeze(ax)
        elif op == "Squeeze":
            axes = a.get("axes") if "axes" in a else (x[1].tolist() if len(x) > 1 and x[1] is not None else None)
            out = x[0]
            if axes is None:
                out = out.squeeze()
            else:
                for ax in sorted((ax % out.dim() for ax in axes), reverse=True):
                    out = out.squeeze(ax)
        elif op == "Reshape":
            shape = [int(s) for s in x[1].tolist()]
            if not a.get("allowzero", 0):
                shape = [x[0].shape[i] if s == 0 else s for i, s in enumerate(shape)]
            out = x[0].reshape(shape)
        elif op == "Transpose":
            out = x[0].permute(a.get("perm", list(range(x[0].dim() - 1, -1, -1))))
        elif op == "Concat":
            out = torch.cat(x, a["axis"])
        elif op == "Split":
            axis = a.get("axis", 0)
            if "split" in a:
                sizes = a["split"]
            elif len(x) > 1 and x[1] is not None:
                sizes = x[1].tolist()
            else:
                k = a.get("num_outputs", len(n.output))
                c = -(-x[0].shape[axis] // k)
                sizes = [min(c, x[0].shape[axis] - i * c) for i in range(k)]
            outs = torch.split(x[0], sizes, axis)
            for name, v in zip(n.output, outs):
                env[name] = v
            return
        elif op == "Slice":
            if "starts" in a:
                starts, ends, axes, steps = a["starts"], a["ends"], a.get("axes"), None
            else:
                starts, ends = x[1].tolist(), x[2].tolist()
                axes = x[3].tolist() if len(x) > 3 and x[3] is not None else None
                steps = x[4].tolist() if len(x) > 4 and x[4] is not None else None
            axes = axes if axes is not None else list(range(len(starts)))
            steps = steps if steps is not None else [1] * len(starts)
            out = x[0]
            for s, e, ax, st in zip(starts, ends, axes, steps):
                ax %= out.dim()
                d = out.shape[ax]
                if st > 0:
                    s = max(0, min(d, s + d if s < 0 else s))
                    e = max(0, min(d, e + d if e < 0 else e))
                else:  # ONNX's clamping for a negative step: [-1, d - 1]
                    s = max(-1, min(d - 1, s + d if s < 0 else s))
                    e = max(-1, min(d - 1, e + d if e < 0 else e))
                out = out.index_select(ax, torch.arange(s, e, st, dtype=torch.int64))
        elif op == "Pad":
            pads = a["pads"] if "pads" in a else x[1].tolist()
            value = float(x[2].item()) if len(x) > 2 and x[2] is not None else a.get("value", 0.0)
            r = len(pads) // 2
            fp = []
            for ax in range(r - 1, -1, -1):
                fp += [int(pads[ax]), int(pads[ax + r])]
            out = F.pad(x[0], fp, value=value)
        elif op == "Conv":
            pads = a.get("pads", [0, 0])
            xin = x[0]
            if pads[0] or pads[1]:
                xin = F.pad(xin, [pads[0], pads[1]])
            out = F.conv1d(xin, x[1], x[2] if len(x) > 2 else None, 1, 0, a.get("dilations", [1])[0], a.get("group", 1))
        elif op in ("Gemm", "MatMul") and key in self.mods:
            out = self.mods[key](x[0])
            if op == "MatMul" and id(n) in getattr(self, "fold_add", {}):
                env[self.fold_add[id(n)]] = out
        elif op == "MatMul":
            out = torch.matmul(x[0], x[1])
        elif op == "Gemm":
            A = x[0].t() if a.get("transA", 0) else x[0]
            Bm = x[1].t() if a.get("transB", 0) else x[1]
            out = a.get("alpha", 1.0) * (A @ Bm)
            if len(x) > 2 and x[2] is not None:
                out = out + a.get("beta", 1.0) * x[2]
        elif op == "GRU":
            out = self._gru(n, a, x, key)
            for name, v in zip(n.output, out):
                if name:
                    env[name] = v
            return
        elif op == "Add":
            out = x[0] + x[1]
        elif op == "Sub":
            out = x[0] - x[1]
        elif op == "Mul":
            out = x[0] * x[1]
        elif op == "Div":
            out = x[0] / x[1] if x[0].is_floating_point() else torch.div(x[0], x[1], rounding_mode="trunc")
        elif op == "Tanh":
            out = torch.tanh(x[0])
        elif op == "Sigmoid":
            out = torch.sigmoid(x[0])
        elif op == "Relu":
            out = torch.relu(x[0])
        elif op == "Softmax":
            out = torch.softmax(x[0], a.get("axis", -1))
        else:
            raise NotImplementedError(f"node {n.name}: {op}")
        env[n.output[0]] = out

    def _gru(self, n, a, x, key):
        m = self.mods[key]
        layout = a.get("layout", 0)
        X = x[0].transpose(0, 1) if layout == 1 else x[0]  # [T, B, C]
        h0 = x[5] if len(x) > 5 else None
        if h0 is not None and layout == 1:
            h0 = h0.transpose(0, 1)  # [D, B, H]
        if not isinstance(m, nn.ModuleList):  # nn.GRU, or its dynamic int8 form
            T, Bn = X.shape[0], X.shape[1]
            D = 2 if m.bidirectional else 1
            if key in self.reverse:
                X = X.flip(0)
            y, hn = m(X, h0) if h0 is not None else m(X)
            if key in self.reverse:
                y = y.flip(0)
            y = y.reshape(T, Bn, D, m.hidden_size).permute(0, 2, 1, 3)  # [T, D, B, H]
        else:
            ys, hs = [], []
            for d, cell in enumerate(m):
                h = h0[d] if h0 is not None else X.new_zeros(X.shape[1], cell.h)
                yd, hd = cell(X, h)
                ys.append(yd)
                hs.append(hd)
            y, hn = torch.stack(ys, 1), torch.stack(hs, 0)
        if layout == 1:
            y, hn = y.permute(2, 0, 1, 3), hn.transpose(0, 1)
        return y, hn
