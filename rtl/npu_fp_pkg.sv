// The NPU's floating-point arithmetic (docs/isa.md, "BF16 arithmetic"): bf16 x bf16 products,
// fp32 sums and fp32 -> bf16 conversion, round to nearest even, subnormals flushed (DAZ/FTZ),
// one canonical NaN. Combinational functions; emu/numeric/Float.cpp is the golden model of every
// bit, and tests/numeric checks this package against it.
package npu_fp_pkg;

  localparam logic [31:0] FP32_QNAN = 32'h7fc0_0000;
  localparam logic [15:0] BF16_QNAN = 16'h7fc0;

  // The magnitude bits (30:0) of an fp32: NaN and Inf are properties of the magnitude.
  function automatic logic fp32_is_nan(input logic [30:0] mag);
    return mag[30:23] == 8'hff && mag[22:0] != 23'd0;
  endfunction

  function automatic logic fp32_is_inf(input logic [30:0] mag);
    return mag == 31'h7f80_0000;
  endfunction

  // sign, biased exponent (may be out of range) and a 27-bit significand whose leading one is at
  // bit 26: 24 bits, then guard, round and sticky. Rounds to nearest even, then overflow -> Inf
  // and results below the smallest normal -> a zero of the sign (FTZ).
  function automatic logic [31:0] fp32_round_pack(input logic sign, input logic signed [11:0] exp,
                                                   input logic [26:0] sig);
    logic [24:0] r;
    logic signed [11:0] e;
    logic up;
    up = sig[2] && (sig[1] || sig[0] || sig[3]);
    r = {1'b0, sig[26:3]} + {24'd0, up};
    e = exp;
    if (r[24]) begin
      r = r >> 1;
      e = e + 12'sd1;
    end
    if (e >= 12'sd255) return {sign, 8'hff, 23'd0};
    if (e <= 12'sd0) return {sign, 31'd0};
    return {sign, e[7:0], r[22:0]};
  endfunction

  // a + b in fp32.
  function automatic logic [31:0] fp32_add(input logic [31:0] a, input logic [31:0] b);
    logic [31:0] x, y;
    logic [7:0] d;
    logic [26:0] sx, sy, mask;
    logic [27:0] sum;
    logic [26:0] norm;
    logic signed [11:0] e;
    int lz;
    logic found;
    if (fp32_is_nan(a[30:0]) || fp32_is_nan(b[30:0])) return FP32_QNAN;
    if (fp32_is_inf(a[30:0]) && fp32_is_inf(b[30:0]) && a[31] != b[31]) return FP32_QNAN;
    if (fp32_is_inf(a[30:0])) return a;
    if (fp32_is_inf(b[30:0])) return b;
    if (a[30:23] == 8'd0 && b[30:23] == 8'd0) return {a[31] & b[31], 31'd0};
    if (a[30:23] == 8'd0) return b;
    if (b[30:23] == 8'd0) return a;
    // |x| >= |y| (for normal numbers the magnitude order is the order of bits 30:0).
    if (b[30:0] > a[30:0]) begin
      x = b;
      y = a;
    end else begin
      x = a;
      y = b;
    end
    sx = {1'b1, x[22:0], 3'b000};
    sy = {1'b1, y[22:0], 3'b000};
    d = x[30:23] - y[30:23];
    if (d >= 8'd27) begin
      sy = 27'd1;  // only the sticky bit survives
    end else begin
      mask = (27'd1 << d) - 27'd1;
      sy = (sy >> d) | {26'd0, (sy & mask) != 27'd0};
    end
    if (x[31] != y[31]) sum = {1'b0, sx} - {1'b0, sy};
    else sum = {1'b0, sx} + {1'b0, sy};
    if (sum == 28'd0) return 32'd0;
    e = {4'd0, x[30:23]};
    if (sum[27]) begin
      norm = sum[27:1] | {26'd0, sum[0]};
      e = e + 12'sd1;
    end else begin
      lz = 0;
      found = 1'b0;
      for (int i = 26; i >= 0; i--) begin
        if (!found && sum[i]) begin
          found = 1'b1;
          lz = 26 - i;
        end
      end
      norm = sum[26:0] << lz;
      e = e - 12'(lz);
    end
    return fp32_round_pack(x[31], e, norm);
  endfunction

  // a x b (bf16 operands) as fp32: exact but for overflow and flush to zero.
  function automatic logic [31:0] bf16_mul(input logic [15:0] a, input logic [15:0] b);
    logic sign;
    logic a_zero, b_zero, a_inf, b_inf;
    logic [15:0] p;
    logic signed [11:0] e;
    sign = a[15] ^ b[15];
    if ((a[14:7] == 8'hff && a[6:0] != 7'd0) || (b[14:7] == 8'hff && b[6:0] != 7'd0))
      return FP32_QNAN;
    a_zero = a[14:7] == 8'd0;
    b_zero = b[14:7] == 8'd0;
    a_inf = a[14:0] == 15'h7f80;
    b_inf = b[14:0] == 15'h7f80;
    if (a_inf || b_inf) begin
      if (a_zero || b_zero) return FP32_QNAN;
      return {sign, 8'hff, 23'd0};
    end
    if (a_zero || b_zero) return {sign, 31'd0};
    p = {8'd0, 1'b1, a[6:0]} * {8'd0, 1'b1, b[6:0]};
    e = $signed({4'd0, a[14:7]}) + $signed({4'd0, b[14:7]}) - 12'sd127;
    if (p[15]) return fp32_round_pack(sign, e + 12'sd1, {p, 11'd0});
    return fp32_round_pack(sign, e, {p[14:0], 12'd0});
  endfunction

  // fp32 -> bf16, round to nearest even (FTZ, canonical NaN, overflow to Inf).
  function automatic logic [15:0] fp32_to_bf16(input logic [31:0] x);
    logic up;
    if (fp32_is_nan(x[30:0])) return BF16_QNAN;
    if (x[30:23] == 8'd0) return {x[31], 15'd0};
    if (fp32_is_inf(x[30:0])) return x[31:16];
    up = x[15] && (x[14:0] != 15'd0 || x[16]);
    return x[31:16] + {15'd0, up};  // a carry moves into the exponent (up to Inf) by itself
  endfunction

  // int32 -> fp32, round to nearest even.
  function automatic logic [31:0] int32_to_fp32(input logic [31:0] x);
    logic sign;
    logic [31:0] mag;
    logic [26:0] sig;
    logic [31:0] mask;
    int top;
    if (x == 32'd0) return 32'd0;
    sign = x[31];
    mag = sign ? 32'd0 - x : x;  // -2^31 is 2^31 unsigned
    top = 0;
    for (int i = 0; i < 32; i++) if (mag[i]) top = i;
    if (top >= 26) begin
      mask = (32'd1 << (top - 26)) - 32'd1;
      sig = 27'(mag >> (top - 26)) | {26'd0, (mag & mask) != 32'd0};
    end else begin
      sig = 27'(mag << (26 - top));
    end
    return fp32_round_pack(sign, 12'sd127 + 12'(top), sig);
  endfunction

  // fp32 -> int8, round to nearest even, saturate to [-128, 127]; NaN -> 0. Bit 8: saturated
  // (did not fit, or NaN or Inf).
  function automatic logic [8:0] fp32_to_int8(input logic [31:0] x);
    logic [23:0] sig;
    logic [23:0] rem, half;
    logic [8:0] whole, mag;
    int sh;
    if (fp32_is_nan(x[30:0])) return {1'b1, 8'd0};
    if (x[30:23] == 8'd0 || x[30:23] < 8'd126) return 9'd0;  // |x| < 0.5
    if (x[30:23] >= 8'd135) return {1'b1, x[31] ? 8'h80 : 8'h7f};  // |x| >= 256, Inf
    sig = {1'b1, x[22:0]};
    sh = 150 - int'(x[30:23]);  // 16..24
    whole = 9'(sig >> sh);  // < 256: the exponent is at most 134
    rem = sig & ((24'd1 << sh) - 24'd1);
    half = 24'd1 << (sh - 1);
    mag = whole + 9'((rem > half || (rem == half && whole[0])) ? 1 : 0);
    if (!x[31]) return mag > 9'd127 ? {1'b1, 8'h7f} : {1'b0, mag[7:0]};
    if (mag > 9'd128) return {1'b1, 8'h80};
    return {1'b0, 8'(9'd0 - mag)};
  endfunction

endpackage
