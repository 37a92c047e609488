// Tables in __constant__ memory as numerics and crypto code keep them: coefficients read at
// uniform indices (one broadcast), lookup tables indexed per thread (serialised reads),
// constant structs, 64-bit and double entries, and dense switch statements that a compiler
// may turn into a table or a branch tree.
#include <stdint.h>

__constant__ float c_poly[8] = {1.0f, -0.5f, 0.25f, -0.125f, 0.0625f, -0.03125f, 0.015625f, -0.0078125f};
__constant__ uint32_t c_sbox[256] = {
#define R(i) (uint32_t)(((i) * 2654435761u) ^ ((i) << 7) ^ 0x5bd1e995u)
  R(0),R(1),R(2),R(3),R(4),R(5),R(6),R(7),R(8),R(9),R(10),R(11),R(12),R(13),R(14),R(15),
  R(16),R(17),R(18),R(19),R(20),R(21),R(22),R(23),R(24),R(25),R(26),R(27),R(28),R(29),R(30),R(31),
  R(32),R(33),R(34),R(35),R(36),R(37),R(38),R(39),R(40),R(41),R(42),R(43),R(44),R(45),R(46),R(47),
  R(48),R(49),R(50),R(51),R(52),R(53),R(54),R(55),R(56),R(57),R(58),R(59),R(60),R(61),R(62),R(63),
  R(64),R(65),R(66),R(67),R(68),R(69),R(70),R(71),R(72),R(73),R(74),R(75),R(76),R(77),R(78),R(79),
  R(80),R(81),R(82),R(83),R(84),R(85),R(86),R(87),R(88),R(89),R(90),R(91),R(92),R(93),R(94),R(95),
  R(96),R(97),R(98),R(99),R(100),R(101),R(102),R(103),R(104),R(105),R(106),R(107),R(108),R(109),R(110),R(111),
  R(112),R(113),R(114),R(115),R(116),R(117),R(118),R(119),R(120),R(121),R(122),R(123),R(124),R(125),R(126),R(127),
  R(128),R(129),R(130),R(131),R(132),R(133),R(134),R(135),R(136),R(137),R(138),R(139),R(140),R(141),R(142),R(143),
  R(144),R(145),R(146),R(147),R(148),R(149),R(150),R(151),R(152),R(153),R(154),R(155),R(156),R(157),R(158),R(159),
  R(160),R(161),R(162),R(163),R(164),R(165),R(166),R(167),R(168),R(169),R(170),R(171),R(172),R(173),R(174),R(175),
  R(176),R(177),R(178),R(179),R(180),R(181),R(182),R(183),R(184),R(185),R(186),R(187),R(188),R(189),R(190),R(191),
  R(192),R(193),R(194),R(195),R(196),R(197),R(198),R(199),R(200),R(201),R(202),R(203),R(204),R(205),R(206),R(207),
  R(208),R(209),R(210),R(211),R(212),R(213),R(214),R(215),R(216),R(217),R(218),R(219),R(220),R(221),R(222),R(223),
  R(224),R(225),R(226),R(227),R(228),R(229),R(230),R(231),R(232),R(233),R(234),R(235),R(236),R(237),R(238),R(239),
  R(240),R(241),R(242),R(243),R(244),R(245),R(246),R(247),R(248),R(249),R(250),R(251),R(252),R(253),R(254),R(255)
#undef R
};
struct Params { float scale; int shift; double bias; uint64_t mask; short taps[6]; };
__constant__ Params c_params = {1.5f, 3, -0.25, 0x00ff00ff00ff00ffull, {1, -2, 3, -4, 5, -6}};
__constant__ double c_weights[16] = {0.5, 0.25, 0.125, 1.0, 2.0, -1.0, 3.5, -0.75,
                                     1e-3, 1e3, 7.0, -7.0, 0.1, 0.2, 0.3, 0.4};

//@run {"grid": 2, "block": 64, "args": ["f32*128", "f32*128"]}
extern "C" __global__ void horner_uniform(const float* __restrict__ x, float* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = x[i], acc = c_poly[7];
#pragma unroll
  for (int k = 6; k >= 0; --k) acc = acc * v + c_poly[k];
  y[i] = acc * c_params.scale;
}

//@run {"grid": 1, "block": 128, "args": ["u32*128", "u32*128"]}
extern "C" __global__ void sbox_rounds(const uint32_t* __restrict__ in, uint32_t* __restrict__ out) {
  int t = threadIdx.x;
  uint32_t s = in[t];
  for (int r = 0; r < 4; ++r) {
    s = c_sbox[s & 0xff] ^ (s >> 8) ^ c_sbox[(s >> 16) & 0xff];
    s = (s << c_params.shift) | (s >> (32 - c_params.shift));
  }
  out[t] = s;
}

//@run {"grid": 1, "block": 96, "args": ["s32*128", "f64*96", "u64*96"]}
extern "C" __global__ void struct_and_doubles(const int* __restrict__ in, double* __restrict__ d, uint64_t* __restrict__ m) {
  int t = threadIdx.x;
  double acc = c_params.bias;
  for (int k = 0; k < 6; ++k) acc += c_params.taps[k] * (double)in[(t + k) & 127];
  acc += c_weights[t & 15] * c_weights[(t >> 4) & 15];
  d[t] = acc;
  m[t] = ((uint64_t)(unsigned)in[t] * 0x9e3779b97f4a7c15ull) & c_params.mask;
}

//@run {"grid": 1, "block": 128, "args": ["s32*128", "s32*128"]}
extern "C" __global__ void dense_switch(const int* __restrict__ in, int* __restrict__ out) {
  int t = threadIdx.x;
  int v = in[t], r;
  switch ((unsigned)v % 11u) {
    case 0: r = v + 1; break;
    case 1: r = v * 3; break;
    case 2: r = v ^ 0x55; break;
    case 3: r = v >> 2; break;
    case 4: r = -v; break;
    case 5: r = v & 0xf0f0; break;
    case 6: r = v | 7; break;
    case 7: r = v - 1000; break;
    case 8: r = (int)c_sbox[t & 255]; break;
    case 9: r = __float_as_int(c_poly[t & 7]); break;
    default: r = 42;
  }
  switch (t & 3) {
    case 0: r += 10; break;
    case 1: r += 20; // fall through
    case 2: r *= 2; break;
  }
  out[t] = r;
}
