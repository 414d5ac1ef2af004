#include "textflag.h"

// LOAD_SUMS loads a chunk's 64 biases at b into Y0 to Y7, the sums.
#define LOAD_SUMS(b) \
	VMOVUPS 0(b), Y0 \
	VMOVUPS 32(b), Y1 \
	VMOVUPS 64(b), Y2 \
	VMOVUPS 96(b), Y3 \
	VMOVUPS 128(b), Y4 \
	VMOVUPS 160(b), Y5 \
	VMOVUPS 192(b), Y6 \
	VMOVUPS 224(b), Y7

// RELU_STORE stores max(0, s) of the 64 sums in Y0 to Y7 at h, with s
// the second source: a NaN sum stays NaN.
#define RELU_STORE(h) \
	VXORPS Y8, Y8, Y8 \
	VMAXPS Y0, Y8, Y0 \
	VMAXPS Y1, Y8, Y1 \
	VMAXPS Y2, Y8, Y2 \
	VMAXPS Y3, Y8, Y3 \
	VMAXPS Y4, Y8, Y4 \
	VMAXPS Y5, Y8, Y5 \
	VMAXPS Y6, Y8, Y6 \
	VMAXPS Y7, Y8, Y7 \
	VMOVUPS Y0, 0(h) \
	VMOVUPS Y1, 32(h) \
	VMOVUPS Y2, 64(h) \
	VMOVUPS Y3, 96(h) \
	VMOVUPS Y4, 128(h) \
	VMOVUPS Y5, 160(h) \
	VMOVUPS Y6, 192(h) \
	VMOVUPS Y7, 224(h)

// ADD_ROW adds to the 64 sums in Y0 to Y7 the row of 64 weights at w
// times the input broadcast in Y8, each product rounded before it is
// added (VMULPS then VADDPS, never a fused multiply-add).
#define ADD_ROW(w) \
	VMULPS 0(w), Y8, Y9 \
	VADDPS Y9, Y0, Y0 \
	VMULPS 32(w), Y8, Y10 \
	VADDPS Y10, Y1, Y1 \
	VMULPS 64(w), Y8, Y11 \
	VADDPS Y11, Y2, Y2 \
	VMULPS 96(w), Y8, Y12 \
	VADDPS Y12, Y3, Y3 \
	VMULPS 128(w), Y8, Y13 \
	VADDPS Y13, Y4, Y4 \
	VMULPS 160(w), Y8, Y14 \
	VADDPS Y14, Y5, Y5 \
	VMULPS 192(w), Y8, Y9 \
	VADDPS Y9, Y6, Y6 \
	VMULPS 224(w), Y8, Y10 \
	VADDPS Y10, Y7, Y7

// MASK_EIGHT ors into R8's low byte which of the eight inputs at off(SI)
// are not ±0 (NaN included: the comparison is unordered-or-not-equal
// with Y15, all zeros).
#define MASK_EIGHT(off) \
	VCMPPS $4, off(SI), Y15, Y8 \
	VMOVMSKPS Y8, AX \
	ORQ  AX, R8

// func layer64AVX2(h, b *[64]float32, x []float32, w []float32)
//
// h = ReLU(b + Σ_i x[i] · w[64·i:][:64]), as layer64Go computes it: each
// product rounded to float32 before it is added (VMULPS then VADDPS,
// never a fused multiply-add), the inputs in order, so that the sums are
// the same to the bit. The 64 sums stay in Y0 to Y7 throughout. Every
// input is multiplied, zeros too: a branch per input to skip them
// mispredicted more than the products it saved. The first layer's
// standardized inputs are rarely 0; the later layers' go to
// layer64SparseAVX2. The caller guarantees len(w) >= 64·len(x).
TEXT ·layer64AVX2(SB), NOSPLIT, $0-64
	MOVQ h+0(FP), DI
	MOVQ b+8(FP), BX
	MOVQ x_base+16(FP), SI
	MOVQ x_len+24(FP), CX
	MOVQ w_base+40(FP), DX
	LOAD_SUMS(BX)
	TESTQ CX, CX
	JEQ   relu

loop:
	VBROADCASTSS (SI), Y8
	ADD_ROW(DX)
	ADDQ $4, SI
	ADDQ $256, DX
	DECQ CX
	JNE  loop

relu:
	RELU_STORE(DI)
	VZEROUPPER
	RET

// func layer64SparseAVX2(h, b *[64]float32, x []float32, w []float32)
//
// layer64AVX2 for inputs that are mostly zero (a hidden layer after the
// first reads ReLU's outputs, about half of them 0): the same sums to the
// bit, as layer64Go makes them, adding the rows of the inputs that are
// not ±0 (NaN included), in order. Each block of 64 inputs is compared
// with zero eight at a time into a 64-bit mask, whose set bits are then
// taken lowest first (BSFQ, then the lowest bit cleared). The caller
// guarantees len(x) % 64 == 0 and len(w) >= 64·len(x).
TEXT ·layer64SparseAVX2(SB), NOSPLIT, $0-64
	MOVQ h+0(FP), DI
	MOVQ b+8(FP), BX
	MOVQ x_base+16(FP), SI
	MOVQ x_len+24(FP), CX
	MOVQ w_base+40(FP), DX
	LOAD_SUMS(BX)
	SHRQ $6, CX
	JEQ  srelu
	VXORPS Y15, Y15, Y15

sblock:
	// R8 = the mask of the block's inputs that are not ±0.
	XORQ R8, R8
	MASK_EIGHT(224)
	SHLQ $8, R8
	MASK_EIGHT(192)
	SHLQ $8, R8
	MASK_EIGHT(160)
	SHLQ $8, R8
	MASK_EIGHT(128)
	SHLQ $8, R8
	MASK_EIGHT(96)
	SHLQ $8, R8
	MASK_EIGHT(64)
	SHLQ $8, R8
	MASK_EIGHT(32)
	SHLQ $8, R8
	MASK_EIGHT(0)
	TESTQ R8, R8
	JEQ   snext

sinput:
	BSFQ R8, R9
	VBROADCASTSS (SI)(R9*4), Y8
	SHLQ $8, R9
	ADDQ DX, R9
	ADD_ROW(R9)
	LEAQ -1(R8), R9
	ANDQ R9, R8
	JNE  sinput

snext:
	ADDQ $256, SI
	ADDQ $16384, DX
	DECQ CX
	JNE  sblock

srelu:
	RELU_STORE(DI)
	VZEROUPPER
	RET

// func dot64AVX2(x, w *[64]float32) float32
//
// Σ_j x[j] · w[j] as dot64Go computes it: eight lanes, lane l the sum of
// the products x[8c+l]·w[8c+l] for c = 0 to 7 in order, each rounded
// before it is added (VMULPS then VADDPS); then the lanes in a fixed tree,
// ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7)).
TEXT ·dot64AVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ w+8(FP), DX
	VMOVUPS 0(SI), Y0
	VMULPS  0(DX), Y0, Y0
	VMOVUPS 32(SI), Y1
	VMULPS  32(DX), Y1, Y1
	VADDPS  Y1, Y0, Y0
	VMOVUPS 64(SI), Y1
	VMULPS  64(DX), Y1, Y1
	VADDPS  Y1, Y0, Y0
	VMOVUPS 96(SI), Y1
	VMULPS  96(DX), Y1, Y1
	VADDPS  Y1, Y0, Y0
	VMOVUPS 128(SI), Y1
	VMULPS  128(DX), Y1, Y1
	VADDPS  Y1, Y0, Y0
	VMOVUPS 160(SI), Y1
	VMULPS  160(DX), Y1, Y1
	VADDPS  Y1, Y0, Y0
	VMOVUPS 192(SI), Y1
	VMULPS  192(DX), Y1, Y1
	VADDPS  Y1, Y0, Y0
	VMOVUPS 224(SI), Y1
	VMULPS  224(DX), Y1, Y1
	VADDPS  Y1, Y0, Y0
	// X0 = (l0+l4, l1+l5, l2+l6, l3+l7)
	VEXTRACTF128 $1, Y0, X1
	VADDPS  X1, X0, X0
	// X0 = ((l0+l4)+(l2+l6), (l1+l5)+(l3+l7), ...)
	VMOVHLPS X0, X0, X1
	VADDPS  X1, X0, X0
	// the two halves' sum
	VMOVSHDUP X0, X1
	VADDSS  X1, X0, X0
	VZEROUPPER
	MOVSS X0, ret+16(FP)
	RET
