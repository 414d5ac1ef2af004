#include "textflag.h"

// func layer64AVX2(h *[64]float32, x []float32, w []float32)
//
// h = ReLU(h + Σ_i x[i] · w[64·i:][:64]), as layer64Go computes it: each
// product rounded to float32 before it is added (VMULPS then VADDPS,
// never a fused multiply-add), the inputs in order, so that the sums are
// the same to the bit. The 64 sums stay in Y0 to Y7 throughout. Every
// input is multiplied, zeros too: a branch to skip them mispredicted
// more than the products it saved, and gathering the nonzero ones first
// cost as much. The caller guarantees len(w) >= 64·len(x).
TEXT ·layer64AVX2(SB), NOSPLIT, $0-56
	MOVQ h+0(FP), DI
	MOVQ x_base+8(FP), SI
	MOVQ x_len+16(FP), CX
	MOVQ w_base+32(FP), DX
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 128(DI), Y4
	VMOVUPS 160(DI), Y5
	VMOVUPS 192(DI), Y6
	VMOVUPS 224(DI), Y7
	TESTQ CX, CX
	JEQ   relu

loop:
	VBROADCASTSS (SI), Y8
	VMULPS 0(DX), Y8, Y9
	VADDPS Y9, Y0, Y0
	VMULPS 32(DX), Y8, Y10
	VADDPS Y10, Y1, Y1
	VMULPS 64(DX), Y8, Y11
	VADDPS Y11, Y2, Y2
	VMULPS 96(DX), Y8, Y12
	VADDPS Y12, Y3, Y3
	VMULPS 128(DX), Y8, Y13
	VADDPS Y13, Y4, Y4
	VMULPS 160(DX), Y8, Y14
	VADDPS Y14, Y5, Y5
	VMULPS 192(DX), Y8, Y9
	VADDPS Y9, Y6, Y6
	VMULPS 224(DX), Y8, Y10
	VADDPS Y10, Y7, Y7
	ADDQ $4, SI
	ADDQ $256, DX
	DECQ CX
	JNE  loop

relu:
	// max(0, s) with s the second source: a NaN sum stays NaN.
	VXORPS Y8, Y8, Y8
	VMAXPS Y0, Y8, Y0
	VMAXPS Y1, Y8, Y1
	VMAXPS Y2, Y8, Y2
	VMAXPS Y3, Y8, Y3
	VMAXPS Y4, Y8, Y4
	VMAXPS Y5, Y8, Y5
	VMAXPS Y6, Y8, Y6
	VMAXPS Y7, Y8, Y7
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	VZEROUPPER
	RET
