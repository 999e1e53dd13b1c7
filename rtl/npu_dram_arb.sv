// DRAM port arbiter: round-robin between fetch, load and store; routes responses by the source
// field of the tag and measures read latency per tag for the PMU.
module npu_dram_arb
  import npu_pkg::*;
(
    input logic clk,
    input logic rst_n,
    input logic ce,
    input logic [31:0] now,  // low bits of the cycle counter (latencies are short)
    // sources: 0 fetch, 1 load, 2 store
    input logic src_valid[3],
    input logic [31:0] src_addr[3],
    input logic [6:0] src_size[3],
    input logic [2:0] src_tag[3],
    input logic [511:0] store_data,
    output logic src_fire[3],
    // port
    output logic dram_req_valid,
    input logic dram_req_ready,
    output logic dram_req_write,
    output logic [31:0] dram_req_addr,
    output logic [6:0] dram_req_size,
    output logic [4:0] dram_req_tag,
    output logic [511:0] dram_req_wdata,
    input logic dram_resp_valid,
    output logic dram_resp_ready,
    input logic dram_resp_write,
    input logic [4:0] dram_resp_tag,
    output logic resp_fire[3],
    // PMU / assertions
    output logic [15:0] rd_latency,
    output logic unknown_tag
);
  logic [1:0] rr;  // source with the highest priority this cycle
  logic [1:0] grant;
  logic any;
  always_comb begin
    any = 1'b0;
    grant = 2'd0;
    for (int k = 2; k >= 0; k--) begin
      // Visit sources starting at rr; the last hit in this reverse loop is the first in order.
      logic [1:0] s;
      s = 2'((int'(rr) + k) % 3);
      if (src_valid[s]) begin
        any = 1'b1;
        grant = s;
      end
    end
  end

  assign dram_req_valid = ce && any;
  assign dram_req_write = grant == SRC_STORE;
  assign dram_req_addr = src_addr[grant];
  assign dram_req_size = src_size[grant];
  assign dram_req_tag = {grant, src_tag[grant]};
  assign dram_req_wdata = grant == SRC_STORE ? store_data : 512'd0;
  logic fire;
  assign fire = dram_req_valid && dram_req_ready;
  always_comb for (int s = 0; s < 3; s++) src_fire[s] = fire && grant == 2'(s);

  assign dram_resp_ready = ce;
  logic rfire;
  assign rfire = dram_resp_valid && dram_resp_ready;
  always_comb for (int s = 0; s < 3; s++) resp_fire[s] = rfire && dram_resp_tag[4:3] == 2'(s);

  logic [31:0] outstanding;
  logic [31:0] stamp[32];
  assign unknown_tag = rfire && !outstanding[dram_resp_tag];
  assign rd_latency = (rfire && !dram_resp_write) ? 16'(now - stamp[dram_resp_tag]) : 16'd0;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      rr <= '0;
      outstanding <= '0;
    end else begin
      if (fire) begin
        rr <= (grant == 2'd2) ? 2'd0 : grant + 2'd1;
        outstanding[dram_req_tag] <= 1'b1;
        stamp[dram_req_tag] <= now;
      end
      if (rfire) outstanding[dram_resp_tag] <= 1'b0;
    end
  end
endmodule
