package onnxgraph

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/mlsched/mlsched/stages/lib/zoo/onnxpb"
)

// maxValues bounds the tensors whose values the analysis keeps: shapes,
// axes, pads, indices and scales, which decide other tensors' shapes, are
// a few elements; weights are never needed by value.
const maxValues = 1 << 12

// width is the bytes per element of an element type, 0 for one without a
// fixed width (strings) or unknown.
func width(dt onnxpb.TensorProto_DataType) int {
	switch dt {
	case onnxpb.TensorProto_FLOAT, onnxpb.TensorProto_INT32, onnxpb.TensorProto_UINT32:
		return 4
	case onnxpb.TensorProto_DOUBLE, onnxpb.TensorProto_INT64, onnxpb.TensorProto_UINT64, onnxpb.TensorProto_COMPLEX64:
		return 8
	case onnxpb.TensorProto_FLOAT16, onnxpb.TensorProto_BFLOAT16, onnxpb.TensorProto_INT16, onnxpb.TensorProto_UINT16:
		return 2
	case onnxpb.TensorProto_INT8, onnxpb.TensorProto_UINT8, onnxpb.TensorProto_BOOL:
		return 1
	case onnxpb.TensorProto_COMPLEX128:
		return 16
	}
	return 0
}

func isFloat(dt onnxpb.TensorProto_DataType) bool {
	switch dt {
	case onnxpb.TensorProto_FLOAT, onnxpb.TensorProto_FLOAT16, onnxpb.TensorProto_BFLOAT16, onnxpb.TensorProto_DOUBLE:
		return true
	}
	return false
}

func isInt(dt onnxpb.TensorProto_DataType) bool {
	switch dt {
	case onnxpb.TensorProto_INT64, onnxpb.TensorProto_INT32, onnxpb.TensorProto_INT16, onnxpb.TensorProto_INT8,
		onnxpb.TensorProto_UINT64, onnxpb.TensorProto_UINT32, onnxpb.TensorProto_UINT16, onnxpb.TensorProto_UINT8,
		onnxpb.TensorProto_BOOL:
		return true
	}
	return false
}

// typeName spells an element type as ONNX does (FLOAT, INT64), lower case
// being how onnxruntime's messages read.
func typeName(dt onnxpb.TensorProto_DataType) string {
	if s, ok := onnxpb.TensorProto_DataType_name[int32(dt)]; ok {
		return s
	}
	return fmt.Sprintf("element type %d", dt)
}

// elements is the element count of dims, 1 for a scalar; past
// maxElements it saturates, so that a product never overflows.
func elements(dims []int64) int64 {
	n := int64(1)
	for _, d := range dims {
		if d > 0 && n > maxElements/d {
			return maxElements + 1
		}
		n *= d
	}
	return n
}

// checkStored refuses a tensor whose data lies outside the file, whose
// dimensions are negative or overflow, or whose stored data does not hold
// as many elements as its dimensions say: a truncated or hand-edited file
// that onnxruntime would refuse when it loads.
func checkStored(t *onnxpb.TensorProto) error {
	if t.GetDataLocation() == onnxpb.TensorProto_EXTERNAL || len(t.GetExternalData()) > 0 {
		return fmt.Errorf("%w: its data lies in an external file; mlsched reads one self-contained .onnx file "+
			"(save with onnx.save_model(..., save_as_external_data=False))", ErrUnsupported)
	}
	n := int64(1)
	for _, d := range t.GetDims() {
		if d < 0 || d > 0 && n > MaxModelBytes/d {
			return fmt.Errorf("%w: dimensions %v are negative or too large", ErrNotONNX, t.GetDims())
		}
		n *= d
	}
	dt := onnxpb.TensorProto_DataType(t.GetDataType())
	w := width(dt)
	if w == 0 {
		return fmt.Errorf("%w: element type %s", ErrUnsupported, typeName(dt))
	}
	var have int64
	switch {
	case t.RawData != nil:
		if int64(len(t.GetRawData())) != n*int64(w) {
			return fmt.Errorf("%w: raw_data holds %d bytes; dimensions %v of %s need %d (a truncated file?)",
				ErrNotONNX, len(t.GetRawData()), t.GetDims(), typeName(dt), n*int64(w))
		}
		return nil
	case len(t.GetFloatData()) > 0:
		have = int64(len(t.GetFloatData()))
	case len(t.GetDoubleData()) > 0:
		have = int64(len(t.GetDoubleData()))
	case len(t.GetInt64Data()) > 0:
		have = int64(len(t.GetInt64Data()))
	case len(t.GetInt32Data()) > 0:
		have = int64(len(t.GetInt32Data()))
	case len(t.GetUint64Data()) > 0:
		have = int64(len(t.GetUint64Data()))
	}
	if dt == onnxpb.TensorProto_COMPLEX64 || dt == onnxpb.TensorProto_COMPLEX128 {
		have /= 2
	}
	if have != n {
		return fmt.Errorf("%w: it stores %d elements; dimensions %v need %d (a truncated file?)", ErrNotONNX, have, t.GetDims(), n)
	}
	return nil
}

// value is what the analysis knows of a small tensor's contents: its
// integers (int types and bool) or its numbers (float types), in
// row-major order.
type value struct {
	ints   []int64
	floats []float64
}

// known reports whether v holds values.
func (v *value) known() bool { return v != nil && (v.ints != nil || v.floats != nil) }

// len is the number of values.
func (v *value) len() int {
	if v.ints != nil {
		return len(v.ints)
	}
	return len(v.floats)
}

// at returns element i as a float64.
func (v *value) at(i int) float64 {
	if v.ints != nil {
		return float64(v.ints[i])
	}
	return v.floats[i]
}

// asInts returns the values as integers, truncating floats.
func (v *value) asInts() []int64 {
	if v.ints != nil {
		return v.ints
	}
	out := make([]int64, len(v.floats))
	for i, f := range v.floats {
		out[i] = int64(f)
	}
	return out
}

// asFloats returns the values as float64s.
func (v *value) asFloats() []float64 {
	if v.floats != nil {
		return v.floats
	}
	out := make([]float64, len(v.ints))
	for i, n := range v.ints {
		out[i] = float64(n)
	}
	return out
}

// valueOf reads the contents of a small tensor, or nil for a large one or
// a type the analysis never needs by value (strings, complex numbers).
// The tensor has passed checkStored.
func valueOf(t *onnxpb.TensorProto) *value {
	n := elements(t.GetDims())
	if n > maxValues {
		return nil
	}
	dt := onnxpb.TensorProto_DataType(t.GetDataType())
	raw := t.GetRawData()
	switch {
	case isInt(dt):
		out := make([]int64, n)
		for i := range out {
			switch {
			case t.RawData != nil:
				out[i] = rawInt(raw, dt, i)
			case dt == onnxpb.TensorProto_INT64:
				out[i] = t.GetInt64Data()[i]
			case dt == onnxpb.TensorProto_UINT64 || dt == onnxpb.TensorProto_UINT32:
				out[i] = int64(t.GetUint64Data()[i])
			default:
				out[i] = int64(t.GetInt32Data()[i])
			}
		}
		return &value{ints: out}
	case isFloat(dt):
		out := make([]float64, n)
		for i := range out {
			switch {
			case t.RawData != nil:
				out[i] = rawFloat(raw, dt, i)
			case dt == onnxpb.TensorProto_FLOAT:
				out[i] = float64(t.GetFloatData()[i])
			case dt == onnxpb.TensorProto_DOUBLE:
				out[i] = t.GetDoubleData()[i]
			default: // float16 and bfloat16 keep their bits in int32_data
				out[i] = halfBits(uint16(t.GetInt32Data()[i]), dt)
			}
		}
		return &value{floats: out}
	}
	return nil
}

// rawInt decodes integer element i of little-endian raw data.
func rawInt(raw []byte, dt onnxpb.TensorProto_DataType, i int) int64 {
	switch dt {
	case onnxpb.TensorProto_INT64:
		return int64(binary.LittleEndian.Uint64(raw[8*i:]))
	case onnxpb.TensorProto_UINT64:
		return int64(binary.LittleEndian.Uint64(raw[8*i:]))
	case onnxpb.TensorProto_INT32:
		return int64(int32(binary.LittleEndian.Uint32(raw[4*i:])))
	case onnxpb.TensorProto_UINT32:
		return int64(binary.LittleEndian.Uint32(raw[4*i:]))
	case onnxpb.TensorProto_INT16:
		return int64(int16(binary.LittleEndian.Uint16(raw[2*i:])))
	case onnxpb.TensorProto_UINT16:
		return int64(binary.LittleEndian.Uint16(raw[2*i:]))
	case onnxpb.TensorProto_INT8:
		return int64(int8(raw[i]))
	}
	return int64(raw[i]) // uint8, bool
}

// rawFloat decodes floating-point element i of little-endian raw data.
func rawFloat(raw []byte, dt onnxpb.TensorProto_DataType, i int) float64 {
	switch dt {
	case onnxpb.TensorProto_FLOAT:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
	case onnxpb.TensorProto_DOUBLE:
		return math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
	}
	return halfBits(binary.LittleEndian.Uint16(raw[2*i:]), dt)
}

// halfBits decodes a float16 or bfloat16 element.
func halfBits(h uint16, dt onnxpb.TensorProto_DataType) float64 {
	if dt == onnxpb.TensorProto_BFLOAT16 {
		return float64(math.Float32frombits(uint32(h) << 16))
	}
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp, frac := int(h>>10&0x1f), float64(h&0x3ff)
	switch exp {
	case 0:
		return sign * frac * math.Pow(2, -24)
	case 0x1f:
		if frac != 0 {
			return math.NaN()
		}
		return sign * math.Inf(1)
	}
	return sign * (1 + frac/1024) * math.Pow(2, float64(exp-15))
}

// shapeString writes a concrete shape as messages show it.
func shapeString(shape []int64) string {
	s := make([]string, len(shape))
	for i, d := range shape {
		s[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(s, " ") + "]"
}
