"""What TensorRT's ONNX parser does, as read from onnx-tensorrt 10.1's sources (ModelImporter.cpp,
onnxOpImporters.cpp, onnxOpCheckers.cpp) and NVIDIA's issues; not measured here (no TensorRT
runs on these machines). Later parsers may know more ops: the lint errs on the side of saying so."""

from onnx import AttributeProto, TensorProto

SOURCE = "onnx-tensorrt 10.1"

# Op types with a built-in importer (the parser dispatches on op_type alone, domain ignored).
IMPORTERS = frozenset("""
Abs Acos Acosh And Asin Asinh Atan Atanh Add ArgMax ArgMin AveragePool BatchNormalization Cast CastLike Ceil
Celu Clip Concat Constant ConstantOfShape Conv ConvTranspose Cos Cosh CumSum DeformConv DepthToSpace
QuantizeLinear DequantizeLinear Div Dropout Einsum Elu Equal Erf Exp Expand EyeLike Flatten Floor Gather
GatherElements GatherND Gelu Gemm GlobalAveragePool GlobalLpPool GlobalMaxPool Greater GreaterOrEqual
GroupNormalization GRU Hardmax HardSigmoid Identity If ImageScaler InstanceNormalization IsInf IsNaN
LayerNormalization LeakyRelu Less LessOrEqual Log LogSoftmax Loop LRN LSTM LpNormalization LpPool MatMul Max
MaxPool Mean MeanVarianceNormalization Min Mul Mod Neg NonMaxSuppression Not OneHot Or Pad ParametricSoftplus
Pow PRelu RandomUniform RandomUniformLike RandomNormal RandomNormalLike Range Reciprocal ReduceL1 ReduceLogSum
ReduceLogSumExp ReduceL2 ReduceMax ReduceMean ReduceMin ReduceProd ReduceSum ReduceSumSquare Relu Sign Round
Resize Reshape ReverseSequence RNN RoiAlign ScaledTanh Scan GridSample ScatterND ScatterElements Scatter Selu
Shape Sigmoid Sin Sinh Size Slice Softmax Softsign Softplus SpaceToDepth Split Sqrt Squeeze Sub Sum Tan Tanh
ThresholdedRelu Tile TopK Transpose Trilu Unsqueeze Upsample Where Xor Shrink HardSwish NonZero Mish
TRT_Scale TRT_Shuffle TRT_TopK_Min TRT_MatMul TRT_RaggedSoftmax TRT_MaxAverageBlendPool TRT_PluginV2 TRT_Gather
TRT_Slice TRT_Resize TRT_FloorDiv TRT_Conv TRT_Deconv TRT_MaxPool TRT_AveragePool TRT_FP8QuantizeLinear
TRT_FP8DequantizeLinear TRT_INT4QuantizeLinear TRT_INT4DequantizeLinear
""".split())

# Op types whose static checker refuses the node outright: they never reach a plugin either.
REFUSED = frozenset("""
AffineGrid Bernoulli BitShift BitwiseAnd BitwiseNot BitwiseOr BitwiseXor BlackmanWindow CenterCropPad Col2Im
Compress ConcatFromSequence ConvInteger DFT Det DynamicQuantizeLinear HammingWindow HannWindow ImageDecoder
MatMulInteger MaxRoiPool MaxUnpool MelWeightMatrix Multinomial NegativeLogLikelihoodLoss Optional
OptionalGetElement OptionalHasElement QLinearConv QLinearMatMul RegexFullMatch STFT SequenceAt
SequenceConstruct SequenceEmpty SequenceErase SequenceInsert SequenceLength SequenceMap SoftmaxCrossEntropyLoss
SplitToSequence StringConcat StringNormalizer StringSplit TfIdfVectorizer Unique
""".split())

# GridSample: the importer knows only opset-16 names; anything else stays kNEAREST, silently.
GRID_SAMPLE_MODES = {"bilinear": "linear", "nearest": "nearest", "bicubic": "cubic"}
GRID_SAMPLE_ISSUE = "NVIDIA/TensorRT#4646"

# Attributes the parser reads itself on a plugin node (strings, defaults "1" and "").
PLUGIN_KEYS = {"plugin_version": "1", "plugin_namespace": ""}
SHAPE_INPUTS_KEY = "tensorrt_plugin_shape_input_indices"

# Plugin fields: how each ONNX attribute type reaches a plugin (loadFields), None: refused.
FIELD_OF = {AttributeProto.INT: "int32", AttributeProto.FLOAT: "float32", AttributeProto.STRING: "char",
            AttributeProto.INTS: "int32", AttributeProto.FLOATS: "float32", AttributeProto.STRINGS: "char",
            AttributeProto.TENSOR: "tensor"}
TENSOR_FIELDS = {TensorProto.FLOAT: "float32", TensorProto.INT8: "int8", TensorProto.INT16: "int16",
                 TensorProto.INT32: "int32", TensorProto.STRING: "char", TensorProto.FLOAT16: "float16",
                 TensorProto.BFLOAT16: "bfloat16", TensorProto.DOUBLE: "float64"}
INT32 = (-(2 ** 31), 2 ** 31 - 1)


def parsed_as_plugin(op_type: str) -> bool:
    """The parser looks for a plugin (op_type, plugin_version, plugin_namespace) for this node."""
    return op_type not in IMPORTERS and op_type not in REFUSED
