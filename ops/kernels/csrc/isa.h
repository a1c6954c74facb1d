// The namespace of one instruction-set level.
//
// The CPU library holds its kernels compiled once per x86-64 level (build.py) and picks one
// level at run time (cpu_isa.cpp).  An inline function is emitted into every object that uses
// it, under one name, and the linker keeps any one copy: it could keep an AVX-512 copy and call
// it on a CPU without AVX-512.  So all code of these headers lives in sk::<SK_ISA>, an inline
// namespace named by the build (-DSK_ISA=x86_64_v3 ...): the copies never merge, and the source
// still says sk::name.  The CUDA build and one-off programs get sk::generic.
#pragma once

#ifndef SK_ISA
#define SK_ISA generic
#endif

#define SK_ISA_BEGIN inline namespace SK_ISA {
#define SK_ISA_END }
