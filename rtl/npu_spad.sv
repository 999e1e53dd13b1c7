// Banked scratchpad with four requesters and fixed priority, and one-cycle read latency.
// Banks interleave on the low address bits. SINGLE_PORT: each bank serves one access (read or
// write) per cycle, priority ra > wa > rb > wb. Otherwise (1R1W) each bank has a read port
// (ra > rb) and a write port (wa > wb). `ra`/`wa` are always granted; `rb`/`wb` get *_gnt and
// wait when they lose. Storage is one array: banks only decide who is served in a cycle.
// Port wb writes WB_WIDTH bits: a whole entry, or (WB_WIDTH < WIDTH: an entry wider than a DRAM
// request, loaded in segments) segment `wb_seg` of it.
module npu_spad #(
    parameter int WIDTH = 64,
    parameter int DEPTH = 2048,
    parameter int BANKS = 4,
    parameter bit SINGLE_PORT = 1,
    parameter int WB_WIDTH = WIDTH,
    parameter int SEG_BITS = 1  // width of wb_seg (>= 1; only $clog2(WIDTH / WB_WIDTH) bits used)
) (
    input logic clk,
    input logic ra_en,
    input logic [15:0] ra_addr,
    output logic [WIDTH-1:0] ra_data,
    input logic rb_en,
    input logic [15:0] rb_addr,
    output logic [WIDTH-1:0] rb_data,
    output logic rb_gnt,
    input logic wa_en,
    input logic [15:0] wa_addr,
    input logic [WIDTH-1:0] wa_data,
    input logic wb_en,
    input logic [15:0] wb_addr,
    input logic [WB_WIDTH-1:0] wb_data,
    /* verilator lint_off UNUSEDSIGNAL */
    input logic [SEG_BITS-1:0] wb_seg,
    /* verilator lint_on UNUSEDSIGNAL */
    output logic wb_gnt,
    output logic [1:0] conflicts,  // requests refused this cycle
    output logic [3:0] range_error  // a granted access outside [0, DEPTH): {wb, wa, rb, ra}
);
  localparam int AW = $clog2(DEPTH);
  localparam int BW = $clog2(BANKS);
  logic [WIDTH-1:0] mem[DEPTH];

  /* verilator lint_off UNUSEDSIGNAL */
  function automatic logic [BW-1:0] bank(input logic [15:0] a);
    return a[BW-1:0];
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  logic rb_lose, wb_lose;
  always_comb begin
    if (SINGLE_PORT) begin
      rb_lose = rb_en && ((ra_en && bank(ra_addr) == bank(rb_addr)) ||
                          (wa_en && bank(wa_addr) == bank(rb_addr)));
      wb_lose = wb_en && ((ra_en && bank(ra_addr) == bank(wb_addr)) ||
                          (wa_en && bank(wa_addr) == bank(wb_addr)) ||
                          (rb_en && !rb_lose && bank(rb_addr) == bank(wb_addr)));
    end else begin
      rb_lose = rb_en && ra_en && bank(ra_addr) == bank(rb_addr);
      wb_lose = wb_en && wa_en && bank(wa_addr) == bank(wb_addr);
    end
  end
  assign rb_gnt = rb_en && !rb_lose;
  assign wb_gnt = wb_en && !wb_lose;
  assign conflicts = {1'b0, rb_lose} + {1'b0, wb_lose};

  function automatic logic out_of_range(input logic en, input logic [15:0] a);
    return en && ({16'd0, a} >= DEPTH);
  endfunction
  assign range_error = {out_of_range(wb_gnt, wb_addr), out_of_range(wa_en, wa_addr),
                        out_of_range(rb_gnt, rb_addr), out_of_range(ra_en, ra_addr)};

  always_ff @(posedge clk) begin
    if (ra_en) ra_data <= mem[ra_addr[AW-1:0]];
    if (rb_gnt) rb_data <= mem[rb_addr[AW-1:0]];
    if (wa_en) mem[wa_addr[AW-1:0]] <= wa_data;
    if (wb_gnt) begin
      if (WB_WIDTH == WIDTH) mem[wb_addr[AW-1:0]][WB_WIDTH-1:0] <= wb_data;
      else mem[wb_addr[AW-1:0]][wb_seg*WB_WIDTH+:WB_WIDTH] <= wb_data;
    end
  end
endmodule
