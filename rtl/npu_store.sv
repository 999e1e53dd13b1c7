// Store engine: executes STORE commands (OUT -> DRAM, 2-D strided). Reads OUT entries through the
// low-priority port (it loses bank conflicts to POST), gathers up to 64 / OUT_BYTES contiguous
// entries of a row (8 on npu8) into one 64-byte write request, up to 8 writes in flight. A STORE completes when every
// write is acknowledged. Tokens: pop_prev (C->S) before starting, push_prev (S->C) at the end.
module npu_store
  import npu_pkg::*;
(
    input logic clk,
    input logic rst_n,
    input logic ce,
    input logic running,
    /* verilator lint_off UNUSEDSIGNAL */
    input logic [255:0] q_cmd,  // only the fields of this engine's opcodes are decoded
    /* verilator lint_on UNUSEDSIGNAL */
    input logic q_empty,
    output logic q_pop,
    input logic tok_in_avail,    // C->S
    output logic tok_in_pop,
    input logic tok_out_full,    // S->C
    output logic tok_out_push,
    // OUT read (low-priority port)
    output logic rd_en,
    output logic [15:0] rd_addr,
    input logic [OUT_BYTES*8-1:0] rd_data,
    input logic rd_gnt,
    // DRAM
    output logic req_valid,
    output logic [31:0] req_addr,
    output logic [6:0] req_size,
    output logic [2:0] req_tag,
    output logic [511:0] req_data,
    input logic req_fire,
    input logic resp_fire,       // write acknowledgement
    input logic [2:0] resp_tag,
    output logic busy,
    output logic [31:0] cur_id,
    output logic retire,
    output logic [2:0] cls
);
  // State encodings: npu_pkg::store_state_t (rtl/npu_facts.toml).
  store_state_t state;

  logic [31:0] row_addr, x_stride;
  logic [31:0] id_q;
  logic [15:0] sram_ptr, y_left, x_size, x_left;
  logic push_prev;

  localparam int CHUNK = DRAM_REQ_BYTES / OUT_BYTES;  // entries per write request

  // Chunk being gathered.
  logic [3:0] chunk_n;      // entries in this chunk (0 = none planned)
  logic [3:0] rd_issued;    // reads issued for it
  logic [3:0] rd_got;       // reads returned
  logic [31:0] chunk_addr;
  logic [511:0] chunk_data;
  logic s1_valid;
  logic [2:0] s1_idx;

  logic [7:0] tag_busy;
  logic [2:0] free_tag;
  logic have_free;
  always_comb begin
    have_free = 1'b0;
    free_tag = 3'd0;
    for (int i = 7; i >= 0; i--) begin
      if (!tag_busy[i]) begin
        have_free = 1'b1;
        free_tag = 3'(i);
      end
    end
  end

  logic [15:0] next_chunk;
  assign next_chunk = (x_left < 16'(CHUNK)) ? x_left : 16'(CHUNK);

  assign rd_en = ce && state == ST_RUN && chunk_n != 0 && rd_issued != chunk_n;
  assign rd_addr = sram_ptr;
  logic rd_fire;
  assign rd_fire = rd_en && rd_gnt;

  logic chunk_full;
  assign chunk_full = chunk_n != 0 && rd_got == chunk_n;
  assign req_valid = ce && state == ST_RUN && chunk_full && have_free;
  assign req_addr = chunk_addr;
  assign req_size = 7'(chunk_n * OUT_BYTES);
  assign req_tag = free_tag;
  assign req_data = chunk_data;

  assign q_pop = ce && state == ST_IDLE && !q_empty;
  assign tok_in_pop = ce && state == ST_TOKEN && tok_in_avail;
  assign tok_out_push = ce && state == ST_PUSH && push_prev && !tok_out_full;
  assign retire = ce && state == ST_PUSH && (!push_prev || !tok_out_full);
  assign busy = state != ST_IDLE;
  assign cur_id = id_q;

  logic all_done;
  assign all_done = y_left == 0 && chunk_n == 0 && tag_busy == 8'd0;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      state <= ST_IDLE;
      tag_busy <= '0;
      chunk_n <= '0;
      s1_valid <= 1'b0;
      y_left <= '0;
      id_q <= '0;
    end else if (ce) begin
      s1_valid <= rd_fire;
      s1_idx <= rd_issued[2:0];
      if (s1_valid) begin
        chunk_data[s1_idx*OUT_BYTES*8+:OUT_BYTES*8] <= rd_data;
        rd_got <= rd_got + 4'd1;
      end
      if (rd_fire) begin
        rd_issued <= rd_issued + 4'd1;
        sram_ptr <= sram_ptr + 16'd1;
      end
      unique case (state)
        ST_IDLE:
        if (!q_empty) begin
          row_addr <= q_cmd[95:64];
          sram_ptr <= q_cmd[111:96];
          y_left <= q_cmd[143:128];
          x_size <= q_cmd[159:144];
          x_left <= q_cmd[159:144];
          x_stride <= q_cmd[191:160];
          push_prev <= q_cmd[6];
          id_q <= q_cmd[63:32];
          chunk_n <= '0;
          if (q_cmd[143:128] == 16'd0 || q_cmd[159:144] == 16'd0) y_left <= '0;
          state <= q_cmd[4] ? ST_TOKEN : ST_RUN;
        end
        ST_TOKEN: if (tok_in_avail) state <= ST_RUN;
        ST_RUN: begin
          // Plan the next chunk when none is being gathered.
          if (chunk_n == 0 && y_left != 0) begin
            chunk_n <= next_chunk[3:0];
            rd_issued <= '0;
            rd_got <= '0;
            chunk_data <= '0;
            chunk_addr <= row_addr + ({16'd0, x_size} - {16'd0, x_left}) * 32'(OUT_BYTES);
            if (x_left == next_chunk) begin
              x_left <= x_size;
              y_left <= y_left - 16'd1;
              row_addr <= row_addr + x_stride;
            end else begin
              x_left <= x_left - next_chunk;
            end
          end
          if (req_fire) chunk_n <= '0;
          if (all_done) state <= ST_PUSH;
        end
        ST_PUSH: if (!push_prev || !tok_out_full) state <= ST_IDLE;
      endcase
      if (req_fire) tag_busy[free_tag] <= 1'b1;
      if (resp_fire) tag_busy[resp_tag] <= 1'b0;
    end
  end

  always_comb begin
    if (!ce) cls = CLS_THROTTLED;
    else if (!running && state == ST_IDLE) cls = CLS_IDLE;
    else if (rd_fire || req_fire || q_pop || tok_in_pop || retire) cls = CLS_ACTIVE;
    else if (state == ST_TOKEN) cls = CLS_STALL_DEP;
    else if (state == ST_PUSH) cls = CLS_STALL_OUT;
    else if (state == ST_RUN) cls = CLS_STALL_MEM;
    else cls = CLS_STARVE;
  end
endmodule
