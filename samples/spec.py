"""What the catalog says about one sample model, and the shapes the samples share."""
from dataclasses import dataclass, field

X2, T2 = [2, 3, 16, 12], [2, 2, 3]          # 2-D: distinct H and W catch axis mix-ups
X3, T3 = [2, 2, 6, 5, 4], [2, 3, 4]         # 3-D: distinct D, H, W
X2B, T2B = [3, 3, 16, 12], [3, 2, 3]        # another batch, for dynamic-batch models
NB = {"x": {0: "N"}, "theta": {0: "N"}}     # dynamic batch only


@dataclass
class Sample:
    file: str
    build: object                     # () -> torch module; forward is the reference
    inputs: dict                      # name -> concrete shape used by tests
    exporter: str                     # torchscript | dynamo | torchscript+aten_fallback | ...
    opset: int
    expected: str                     # fuse | untouched
    chains: int                       # chains a rewriter should fuse (0 for negatives)
    align_corners: int = 0
    mode: str = "bilinear"            # torch names, whatever name the graph uses
    padding_mode: str = "zeros"
    dims: int = 2
    dynamic: dict = None              # input name -> {axis: symbol}; None = all static
    auto: bool = False                # dynamo Dim.AUTO on the axes listed in `dynamic`
    alt_inputs: dict = None           # a second shape set the dynamic axes must accept
    dtypes: dict = field(default_factory=dict)   # non-float32 inputs
    outputs: list = field(default_factory=lambda: ["y"])
    chain_settings: list = None       # per chain (align_corners, mode, padding_mode) if several
    notes: str = ""
    output_axes: dict = None          # dynamic axes of the outputs, when not those of x
    reference: str = "torch"          # "onnxruntime": the export computes what torch does not
    tolerance: float = 0.0            # > 0: the fused model's agreed error (float16 pipelines)
    refusal: str = ""                 # untouched: what the near miss's reason says
