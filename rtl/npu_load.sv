// Load engine: executes LOAD commands (2-D strided DRAM -> INP/WGT/ACC). Requests go out row by
// row in chunks of up to 64 bytes with up to 8 in flight; responses (any order) are written to
// the scratchpad one entry per cycle through the low-priority write port, so they can lose a
// bank conflict. Tokens: pop_next (C->L) before starting, push_next (L->C) when all is written.
module npu_load
  import npu_pkg::*;
(
    input logic clk,
    input logic rst_n,
    input logic ce,
    input logic running,
    // command queue
    /* verilator lint_off UNUSEDSIGNAL */
    input logic [255:0] q_cmd,  // only the fields of this engine's opcodes are decoded
    /* verilator lint_on UNUSEDSIGNAL */
    input logic q_empty,
    output logic q_pop,
    // tokens
    input logic tok_in_avail,   // C->L
    output logic tok_in_pop,
    input logic tok_out_full,   // L->C
    output logic tok_out_push,
    // DRAM
    output logic req_valid,
    output logic [31:0] req_addr,
    output logic [6:0] req_size,
    output logic [2:0] req_tag,
    input logic req_fire,
    input logic resp_fire,
    input logic [2:0] resp_tag,
    input logic [511:0] resp_data,
    // scratchpad write (low priority port of INP/WGT/ACC)
    output logic wr_en,
    output logic [1:0] wr_buf,
    output logic [15:0] wr_addr,
    output logic [511:0] wr_data,
    input logic wr_gnt,
    // status
    output logic busy,
    output logic [31:0] cur_id,
    output logic retire,
    output logic [2:0] cls
);
  // State encodings: npu_pkg::load_state_t (rtl/npu_facts.toml).
  load_state_t state;

  // Current command.
  logic [31:0] row_addr, x_stride;
  logic [15:0] sram_ptr, x_size, x_left;
  logic [15:0] y_left;  // rows still to request
  logic [1:0] buf_id;
  logic push_next;
  logic [31:0] id_q;

  // Entries per 64-byte request and entry size in bytes, per buffer.
  logic [3:0] max_chunk;
  logic [6:0] ebytes;
  always_comb begin
    unique case (buf_id)
      BUF_WGT: begin max_chunk = 4'd1; ebytes = 7'd64; end
      BUF_ACC: begin max_chunk = 4'd2; ebytes = 7'd32; end
      default: begin max_chunk = 4'd8; ebytes = 7'd8; end
    endcase
  end

  // Tags: one data slot each.
  logic [7:0] tag_busy;
  logic [15:0] tag_sram[8];
  logic [3:0] tag_n[8];
  logic [511:0] tag_data[8];
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

  // Write queue: tags whose data arrived, in arrival order.
  logic [2:0] wq[8];
  logic [2:0] wq_rd, wq_wr;
  logic [3:0] wq_level;
  logic [3:0] wr_idx;  // entry within the chunk at the head of the write queue

  logic more_reqs;
  assign more_reqs = state == LD_RUN && y_left != 0;
  logic [15:0] chunk16;
  assign chunk16 = (x_left < {12'd0, max_chunk}) ? x_left : {12'd0, max_chunk};

  assign req_valid = ce && more_reqs && have_free;
  assign req_addr = row_addr + (({16'd0, x_size} - {16'd0, x_left}) * {25'd0, ebytes});
  assign req_size = chunk16[6:0] * ebytes;
  assign req_tag = free_tag;

  logic [2:0] wtag;
  assign wtag = wq[wq_rd];
  assign wr_en = ce && wq_level != 0;
  assign wr_buf = buf_id;
  assign wr_addr = tag_sram[wtag] + {12'd0, wr_idx};
  always_comb begin
    unique case (buf_id)
      BUF_WGT: wr_data = tag_data[wtag];
      BUF_ACC: wr_data = {256'd0, tag_data[wtag][wr_idx[0]*256+:256]};
      default: wr_data = {448'd0, tag_data[wtag][wr_idx[2:0]*64+:64]};
    endcase
  end
  logic wr_done_chunk;
  assign wr_done_chunk = wr_gnt && (wr_idx + 4'd1 == tag_n[wtag]);

  logic all_written;
  assign all_written = y_left == 0 && tag_busy == 8'd0;

  assign q_pop = ce && state == LD_IDLE && !q_empty;
  assign tok_in_pop = ce && state == LD_TOKEN && tok_in_avail;
  assign tok_out_push = ce && state == LD_PUSH && push_next && !tok_out_full;
  assign retire = ce && state == LD_PUSH && (!push_next || !tok_out_full);
  assign busy = state != LD_IDLE;
  assign cur_id = id_q;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      state <= LD_IDLE;
      tag_busy <= '0;
      wq_rd <= '0;
      wq_wr <= '0;
      wq_level <= '0;
      wr_idx <= '0;
      y_left <= '0;
      id_q <= '0;
    end else if (ce) begin
      unique case (state)
        LD_IDLE:
        if (!q_empty) begin
          row_addr <= q_cmd[95:64];
          sram_ptr <= q_cmd[111:96];
          buf_id <= q_cmd[113:112];
          y_left <= q_cmd[143:128];
          x_size <= q_cmd[159:144];
          x_left <= q_cmd[159:144];
          x_stride <= q_cmd[191:160];
          push_next <= q_cmd[7];
          id_q <= q_cmd[63:32];
          state <= q_cmd[5] ? LD_TOKEN : LD_RUN;
          // An empty transfer (no rows or no columns) completes at once.
          if (q_cmd[143:128] == 16'd0 || q_cmd[159:144] == 16'd0) begin
            y_left <= '0;
          end
        end
        LD_TOKEN: if (tok_in_avail) state <= LD_RUN;
        LD_RUN: if (all_written && !req_fire) state <= LD_PUSH;
        LD_PUSH: if (!push_next || !tok_out_full) state <= LD_IDLE;
      endcase

      if (req_fire) begin
        tag_busy[free_tag] <= 1'b1;
        tag_sram[free_tag] <= sram_ptr;
        tag_n[free_tag] <= chunk16[3:0];
        sram_ptr <= sram_ptr + chunk16;
        if (x_left == chunk16) begin
          x_left <= x_size;
          y_left <= y_left - 16'd1;
          row_addr <= row_addr + x_stride;
        end else begin
          x_left <= x_left - chunk16;
        end
      end
      if (resp_fire) begin
        tag_data[resp_tag] <= resp_data;
        wq[wq_wr] <= resp_tag;
        wq_wr <= wq_wr + 3'd1;
      end
      if (wr_gnt) begin
        if (wr_done_chunk) begin
          wr_idx <= '0;
          wq_rd <= wq_rd + 3'd1;
          tag_busy[wtag] <= 1'b0;
        end else begin
          wr_idx <= wr_idx + 4'd1;
        end
      end
      wq_level <= wq_level + {3'd0, resp_fire} - {3'd0, wr_done_chunk};
    end
  end

  always_comb begin
    if (!ce) cls = CLS_THROTTLED;
    else if (!running && state == LD_IDLE) cls = CLS_IDLE;
    else if (req_fire || wr_gnt || q_pop || tok_in_pop || retire) cls = CLS_ACTIVE;
    else if (state == LD_TOKEN) cls = CLS_STALL_DEP;
    else if (state == LD_PUSH) cls = CLS_STALL_OUT;
    else if (state == LD_RUN) cls = CLS_STALL_MEM;
    else cls = CLS_STARVE;
  end
endmodule
