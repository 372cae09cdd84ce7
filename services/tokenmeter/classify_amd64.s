//go:build amd64

#include "textflag.h"

// BCAST defines a 16-byte constant: the byte v in every lane.
#define BCAST(name, v) \
	DATA name<>+0(SB)/8, $v; \
	DATA name<>+8(SB)/8, $v; \
	GLOBL name<>(SB), RODATA|NOPTR, $16

// Bytes broadcast to 16 lanes, for the signed compares below (ASCII only).
BCAST(c20, 0x2020202020202020)
BCAST(c60, 0x6060606060606060)
BCAST(c7b, 0x7b7b7b7b7b7b7b7b)
BCAST(c2f, 0x2f2f2f2f2f2f2f2f)
BCAST(c3a, 0x3a3a3a3a3a3a3a3a)
BCAST(c0a, 0x0a0a0a0a0a0a0a0a)
BCAST(c0d, 0x0d0d0d0d0d0d0d0d)
BCAST(c08, 0x0808080808080808)
BCAST(c0e, 0x0e0e0e0e0e0e0e0e)
BCAST(c7f, 0x7f7f7f7f7f7f7f7f)

// GATHER moves the lane mask in x into bits sh..sh+15 of acc.
#define GATHER(x, acc, sh) \
	PMOVMSKB x, AX; \
	SHLQ     $sh, AX; \
	ORQ      AX, acc

// CHUNK classifies the 16 bytes at off(SI) into R9..R13 (L, D, S, N, P) at
// bit sh. Constants: X6 ' ', X7 0x60, X8 0x7B, X9 0x2F, X10 0x3A, X11 '\n',
// X12 '\r', X13 0x08, X14 0x0E, X15 0x7F.
#define CHUNK(off, sh) \
	MOVOU   off(SI), X0; \
	MOVOA   X0, X1;      \ // letters: y = x|0x20, 0x60 < y < 0x7B
	POR     X6, X1;      \
	MOVOA   X1, X2;      \
	PCMPGTB X7, X2;      \
	MOVOA   X8, X3;      \
	PCMPGTB X1, X3;      \
	PAND    X3, X2;      \
	GATHER(X2, R9, sh);  \
	MOVOA   X0, X3;      \ // digits: 0x2F < x < 0x3A
	PCMPGTB X9, X3;      \
	MOVOA   X10, X4;     \
	PCMPGTB X0, X4;      \
	PAND    X4, X3;      \
	GATHER(X3, R10, sh); \
	POR     X3, X2;      \ // X2 = letters|digits
	MOVOA   X0, X3;      \ // newlines: x == '\n' || x == '\r'
	PCMPEQB X11, X3;     \
	MOVOA   X0, X4;      \
	PCMPEQB X12, X4;     \
	POR     X4, X3;      \
	GATHER(X3, R12, sh); \
	MOVOA   X0, X4;      \ // blanks: 0x08 < x < 0x0E but newlines, or ' '
	PCMPGTB X13, X4;     \
	MOVOA   X14, X5;     \
	PCMPGTB X0, X5;      \
	PAND    X5, X4;      \
	PANDN   X4, X3;      \
	MOVOA   X0, X4;      \
	PCMPEQB X6, X4;      \
	POR     X4, X3;      \
	GATHER(X3, R11, sh); \
	MOVOA   X0, X3;      \ // punctuation: ' ' < x < 0x7F but letters, digits
	PCMPGTB X6, X3;      \
	MOVOA   X15, X5;     \
	PCMPGTB X0, X5;      \
	PAND    X5, X3;      \
	PANDN   X3, X2;      \
	GATHER(X2, R13, sh)

// func classifySSE2(dst *classMasks, src *byte, blocks int)
//
// For each 64-byte block, four 16-byte chunks are compared lane by lane and
// PMOVMSKB gathers each class into 16 bits; R9..R13 accumulate L, D, S, N,
// P for the block, written to dst as one classMasks (40 bytes).
TEXT ·classifySSE2(SB), NOSPLIT, $0-24
	MOVQ  dst+0(FP), DI
	MOVQ  src+8(FP), SI
	MOVQ  blocks+16(FP), CX
	MOVOU c20<>(SB), X6
	MOVOU c60<>(SB), X7
	MOVOU c7b<>(SB), X8
	MOVOU c2f<>(SB), X9
	MOVOU c3a<>(SB), X10
	MOVOU c0a<>(SB), X11
	MOVOU c0d<>(SB), X12
	MOVOU c08<>(SB), X13
	MOVOU c0e<>(SB), X14
	MOVOU c7f<>(SB), X15

loop:
	TESTQ CX, CX
	JZ    done
	XORQ  R9, R9
	XORQ  R10, R10
	XORQ  R11, R11
	XORQ  R12, R12
	XORQ  R13, R13
	CHUNK(0, 0)
	CHUNK(16, 16)
	CHUNK(32, 32)
	CHUNK(48, 48)
	MOVQ  R9, 0(DI)
	MOVQ  R10, 8(DI)
	MOVQ  R11, 16(DI)
	MOVQ  R12, 24(DI)
	MOVQ  R13, 32(DI)
	ADDQ  $64, SI
	ADDQ  $40, DI
	DECQ  CX
	JMP   loop

done:
	RET
