// NPU package: the architectural constants of docs/isa.md (mirrored by emu/isa/Isa.h).
/* verilator lint_off UNUSEDPARAM */
package npu_pkg;

  // Opcodes (w0[3:0]).
  localparam logic [3:0] OP_LOAD = 4'd1;
  localparam logic [3:0] OP_GEMM = 4'd2;
  localparam logic [3:0] OP_POST = 4'd3;
  localparam logic [3:0] OP_STORE = 4'd4;
  localparam logic [3:0] OP_SYNC = 4'd5;
  localparam logic [3:0] OP_END = 4'd6;

  // Scratchpad buffers.
  localparam logic [1:0] BUF_INP = 2'd0;
  localparam logic [1:0] BUF_WGT = 2'd1;
  localparam logic [1:0] BUF_ACC = 2'd2;
  localparam logic [1:0] BUF_OUT = 2'd3;

  localparam int INP_DEPTH = 2048;
  localparam int WGT_DEPTH = 512;
  localparam int ACC_DEPTH = 2048;
  localparam int OUT_DEPTH = 2048;

  // DRAM request sources (tag[4:3]).
  localparam logic [1:0] SRC_FETCH = 2'd0;
  localparam logic [1:0] SRC_LOAD = 2'd1;
  localparam logic [1:0] SRC_STORE = 2'd2;

  // PMU cycle classes: exactly one per engine per cycle.
  localparam logic [2:0] CLS_ACTIVE = 3'd0;
  localparam logic [2:0] CLS_STALL_MEM = 3'd1;
  localparam logic [2:0] CLS_STALL_DEP = 3'd2;
  localparam logic [2:0] CLS_STARVE = 3'd3;
  localparam logic [2:0] CLS_STALL_OUT = 3'd4;
  localparam logic [2:0] CLS_THROTTLED = 3'd5;
  localparam logic [2:0] CLS_IDLE = 3'd6;

  localparam int NUM_ENGINES = 5;  // fetch, load, gemm, post, store
  localparam int NUM_CLASSES = 7;
  localparam int NUM_COUNTERS = 62;

  // Global counter indices (engine classes occupy 0..34).
  localparam int C_CYCLES = 35;
  localparam int C_MACS_ISSUED = 36;
  localparam int C_MACS_USEFUL = 37;
  localparam int C_DRAM_RD_BYTES = 38;
  localparam int C_DRAM_WR_BYTES = 39;
  localparam int C_DRAM_RD_REQS = 40;
  localparam int C_DRAM_WR_REQS = 41;
  localparam int C_DRAM_RD_LAT = 42;
  localparam int C_SPAD_RD = 43;  // inp rd, inp wr, wgt rd, wgt wr, acc rd, acc wr, out rd, out wr
  localparam int C_BANK_CONFLICT = 51;  // inp, wgt, acc, out
  localparam int C_RETIRED = 55;  // load, gemm, post, store, sync, end
  localparam int C_SATURATIONS = 61;

  // Assertion codes latched in assert_code.
  localparam logic [7:0] A_QUEUE_OVERFLOW = 8'd1;
  localparam logic [7:0] A_TOKEN_UNDERFLOW = 8'd2;
  localparam logic [7:0] A_TOKEN_OVERFLOW = 8'd3;
  localparam logic [7:0] A_ILLEGAL_CMD = 8'd4;
  localparam logic [7:0] A_UNKNOWN_TAG = 8'd5;
  localparam logic [7:0] A_SPAD_RANGE = 8'd6;

endpackage
/* verilator lint_on UNUSEDPARAM */
