// Test top for rtl/npu_fp_pkg.sv: every function of the package on free inputs, so that
// tests/numeric can compare the RTL's bits with emu/numeric's.
module fp_unit_top
  import npu_fp_pkg::*;
(
    input logic [7:0][15:0] a,  // one lane's bf16 inputs
    input logic [7:0][15:0] b,  // and weights
    input logic [31:0] acc,
    input logic [31:0] x,
    input logic [31:0] y,
    output logic [31:0] dot_acc,  // acc + ((p0+p1)+(p2+p3))+((p4+p5)+(p6+p7)), pi = a[i] x b[i]
    output logic [31:0] mul_out,  // a[0] x b[0]
    output logic [31:0] add_out,  // x + y
    output logic [15:0] bf16_out,  // bf16(x)
    output logic [31:0] from_int,  // fp32(int32 x)
    output logic [8:0] to_int8     // {saturated, int8(x)}
);
  logic [31:0] p[8];
  logic [31:0] s1[4];
  logic [31:0] s2[2];
  always_comb begin
    for (int i = 0; i < 8; i++) p[i] = bf16_mul(a[i], b[i]);
    for (int i = 0; i < 4; i++) s1[i] = fp32_add(p[2*i], p[2*i+1]);
    for (int i = 0; i < 2; i++) s2[i] = fp32_add(s1[2*i], s1[2*i+1]);
    dot_acc = fp32_add(acc, fp32_add(s2[0], s2[1]));
  end
  assign mul_out = p[0];
  assign add_out = fp32_add(x, y);
  assign bf16_out = fp32_to_bf16(x);
  assign from_int = int32_to_fp32(x);
  assign to_int8 = fp32_to_int8(x);
endmodule
