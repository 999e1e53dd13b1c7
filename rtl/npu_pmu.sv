// Performance monitoring unit: NUM_COUNTERS 64-bit counters (docs/counters.md). Every cycle each engine's
// class counter advances by one, so the classes of an engine sum to `cycles`. A snapshot copies
// all counters at once into shadow registers that the CSR port reads while counting continues.
module npu_pmu
  import npu_pkg::*;
(
    input logic clk,
    input logic rst_n,
    input logic enable,
    input logic clear,
    input logic snapshot,
    input logic [6:0] sel,
    output logic [63:0] sel_value,
    input logic [2:0] cls[NUM_ENGINES],
    input logic macs_issue,
    input logic macs_bf16,             // the issuing GEMM is BF16 (rows/2 x cols MACs)
    input logic [MACS_W-1:0] macs_useful,
    input logic [6:0] rd_bytes,        // DRAM read request accepted this cycle (bytes)
    input logic [6:0] wr_bytes,
    input logic rd_req,
    input logic wr_req,
    input logic [15:0] rd_latency,     // latency of the read response accepted this cycle
    input logic [7:0] spad_access,     // inp rd, inp wr, wgt rd, wgt wr, acc rd, acc wr, out rd, out wr
    input logic [1:0] conflicts[4],    // per buffer
    input logic [5:0] retired,         // load, gemm, post, store, sync, end
    input logic [SAT_W-1:0] saturations
);
  localparam int BF16_MACS = ARRAY_ROWS / 2 * ARRAY_COLS;  // MACs of one BF16 iteration
  logic [63:0] cnt[NUM_COUNTERS];
  logic [63:0] shadow[NUM_COUNTERS];

  localparam int SEL_W = $clog2(NUM_COUNTERS);
  assign sel_value = ({25'd0, sel} < NUM_COUNTERS) ? shadow[sel[SEL_W-1:0]] : 64'd0;

  always_ff @(posedge clk) begin
    if (!rst_n || clear) begin
      for (int i = 0; i < NUM_COUNTERS; i++) cnt[i] <= '0;
    end else if (enable) begin
      for (int e = 0; e < NUM_ENGINES; e++) begin
        cnt[e*NUM_CLASSES+int'(cls[e])] <= cnt[e*NUM_CLASSES+int'(cls[e])] + 64'd1;
      end
      cnt[C_CYCLES] <= cnt[C_CYCLES] + 64'd1;
      if (macs_issue && !macs_bf16)
        cnt[C_MACS_ISSUED] <= cnt[C_MACS_ISSUED] + 64'(ARRAY_ROWS * ARRAY_COLS);
      if (macs_issue && macs_bf16) begin
        cnt[C_MACS_ISSUED] <= cnt[C_MACS_ISSUED] + 64'(BF16_MACS);
        cnt[C_MACS_ISSUED_BF16] <= cnt[C_MACS_ISSUED_BF16] + 64'(BF16_MACS);
        cnt[C_MACS_USEFUL_BF16] <= cnt[C_MACS_USEFUL_BF16] + 64'(macs_useful);
      end
      cnt[C_MACS_USEFUL] <= cnt[C_MACS_USEFUL] + 64'(macs_useful);
      cnt[C_DRAM_RD_BYTES] <= cnt[C_DRAM_RD_BYTES] + {57'd0, rd_bytes};
      cnt[C_DRAM_WR_BYTES] <= cnt[C_DRAM_WR_BYTES] + {57'd0, wr_bytes};
      cnt[C_DRAM_RD_REQS] <= cnt[C_DRAM_RD_REQS] + {63'd0, rd_req};
      cnt[C_DRAM_WR_REQS] <= cnt[C_DRAM_WR_REQS] + {63'd0, wr_req};
      cnt[C_DRAM_RD_LAT] <= cnt[C_DRAM_RD_LAT] + {48'd0, rd_latency};
      for (int i = 0; i < 8; i++) begin
        cnt[C_SPAD_RD+i] <= cnt[C_SPAD_RD+i] + {63'd0, spad_access[i]};
      end
      for (int b = 0; b < 4; b++) begin
        cnt[C_BANK_CONFLICT+b] <= cnt[C_BANK_CONFLICT+b] + {62'd0, conflicts[b]};
      end
      for (int r = 0; r < 6; r++) begin
        cnt[C_RETIRED+r] <= cnt[C_RETIRED+r] + {63'd0, retired[r]};
      end
      cnt[C_SATURATIONS] <= cnt[C_SATURATIONS] + 64'(saturations);
    end
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      for (int i = 0; i < NUM_COUNTERS; i++) shadow[i] <= '0;
    end else if (snapshot) begin
      for (int i = 0; i < NUM_COUNTERS; i++) shadow[i] <= cnt[i];
    end
  end
endmodule
