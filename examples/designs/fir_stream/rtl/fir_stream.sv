// A 4-tap FIR filter on AXI-Stream (docs/designs.md, "Examples"): signed 8-bit samples in,
// signed 32-bit sums out, y[n] = C0 x[n] + C1 x[n-1] + C2 x[n-2] + C3 x[n-3] (x[-k] = 0).
// Two pipeline stages with valid/ready between them: the multiply stage (window and products)
// and the sum stage. Back-pressure from the sink stalls both; nothing is dropped.
// Fault scenarios (FAULTS.md), each behind a define: BUG_SKIP_TAP3 (the sum leaves out C3's
// product), BUG_IGNORE_READY (the sum stage overwrites an output beat the sink has not taken).
module fir_stream #(
    parameter int signed C0 = 3,
    parameter int signed C1 = -5,
    parameter int signed C2 = 7,
    parameter int signed C3 = 2
) (
    input  logic        clk,
    input  logic        rst_n,
    input  logic [7:0]  s_axis_tdata,
    input  logic        s_axis_tvalid,
    output logic        s_axis_tready,
    output logic [31:0] m_axis_tdata,
    output logic        m_axis_tvalid,
    input  logic        m_axis_tready
);
  // Multiply stage: the sample window and its four products.
  logic signed [7:0]  win[0:3];
  logic signed [31:0] prod[0:3];
  logic               mul_valid;
`ifdef BUG_IGNORE_READY
  wire                mul_ready = 1'b1;
`else
  wire                mul_ready = !m_axis_tvalid || m_axis_tready;
`endif
  assign s_axis_tready = !mul_valid || mul_ready;
  // Counts accepted input samples (a design counter for the profile).
  logic [31:0] samples_in;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      mul_valid <= 1'b0;
      samples_in <= '0;
      for (int i = 0; i < 4; i++) begin
        win[i] <= '0;
        prod[i] <= '0;
      end
    end else begin
      if (s_axis_tvalid && s_axis_tready) begin
        win[0] <= s_axis_tdata;
        for (int i = 1; i < 4; i++) win[i] <= win[i-1];
        prod[0] <= C0 * $signed(s_axis_tdata);
        prod[1] <= C1 * win[0];
        prod[2] <= C2 * win[1];
        prod[3] <= C3 * win[2];
        mul_valid <= 1'b1;
        samples_in <= samples_in + 1;
      end else if (mul_ready) begin
        mul_valid <= 1'b0;
      end
    end
  end

  // Sum stage.
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      m_axis_tvalid <= 1'b0;
      m_axis_tdata <= '0;
    end else if (mul_valid && mul_ready) begin
`ifdef BUG_SKIP_TAP3
      m_axis_tdata <= prod[0] + prod[1] + prod[2];
`else
      m_axis_tdata <= prod[0] + prod[1] + prod[2] + prod[3];
`endif
      m_axis_tvalid <= 1'b1;
    end else if (m_axis_tready) begin
      m_axis_tvalid <= 1'b0;
    end
  end
endmodule
