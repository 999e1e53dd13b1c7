// Synchronous FIFO with occupancy output. Pushing when full or popping when empty is a design
// error: the push/pop is dropped and `overflow`/`underflow` pulses so the top can assert.
module npu_fifo #(
    parameter int WIDTH = 256,
    parameter int DEPTH = 8
) (
    input logic clk,
    input logic rst_n,
    input logic clear,
    input logic push,
    input logic [WIDTH-1:0] push_data,
    input logic pop,
    output logic [WIDTH-1:0] head,
    output logic empty,
    output logic full,
    output logic [$clog2(DEPTH+1)-1:0] level,
    output logic overflow
);
  localparam int AW = $clog2(DEPTH);
  logic [WIDTH-1:0] mem[DEPTH];
  logic [AW-1:0] rd_ptr, wr_ptr;

  assign empty = (level == 0);
  assign full = (level == DEPTH[$clog2(DEPTH+1)-1:0]);
  assign head = mem[rd_ptr];
  assign overflow = push && full && !pop;

  always_ff @(posedge clk) begin
    if (!rst_n || clear) begin
      rd_ptr <= '0;
      wr_ptr <= '0;
      level <= '0;
    end else begin
      if (push && (!full || pop)) begin
        mem[wr_ptr] <= push_data;
        wr_ptr <= wr_ptr + 1'b1;
      end
      if (pop && !empty) rd_ptr <= rd_ptr + 1'b1;
      if ((push && (!full || pop)) && !(pop && !empty)) level <= level + 1'b1;
      else if (!(push && (!full || pop)) && (pop && !empty)) level <= level - 1'b1;
    end
  end
endmodule
