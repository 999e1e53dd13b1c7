// Load engine: executes LOAD commands (2-D strided DRAM -> INP/WGT/ACC). Requests go out row by
// row in chunks of up to 64 bytes with up to 8 in flight; responses (any order) are written to
// the scratchpad one unit per cycle through the low-priority write port, so they can lose a
// bank conflict. A unit is an entry, or a 64-byte segment of an entry wider than a request
// (WGT from npu16 up, ACC on npu32): the engine counts units, and the port writes segment
// `wr_seg` of entry `wr_addr`. Tokens: pop_next (C->L) before starting, push_next (L->C) when all is written.
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
    output logic [SEG_BITS-1:0] wr_seg,
    input logic wr_gnt,
    // status
    output logic busy,
    output logic [31:0] cur_id,
    output logic retire,
    output logic [2:0] cls
);
  // State encodings: npu_pkg::load_state_t (rtl/npu_facts.toml).
  load_state_t state;

  // Unit bytes (an entry or a request-sized segment of one), units per request and segment
  // index bits, per buffer.
  localparam int INP_UNIT = INP_BYTES < DRAM_REQ_BYTES ? INP_BYTES : DRAM_REQ_BYTES;
  localparam int WGT_UNIT = WGT_BYTES < DRAM_REQ_BYTES ? WGT_BYTES : DRAM_REQ_BYTES;
  localparam int ACC_UNIT = ACC_BYTES < DRAM_REQ_BYTES ? ACC_BYTES : DRAM_REQ_BYTES;
  localparam int INP_SB = $clog2(INP_BYTES / INP_UNIT);
  localparam int WGT_SB = $clog2(WGT_BYTES / WGT_UNIT);
  localparam int ACC_SB = $clog2(ACC_BYTES / ACC_UNIT);
  localparam int UW = 16 + WGT_SB;  // unit counters: 16-bit entry counts times segments
  localparam logic [511:0] ONES = '1;

  // Current command (sram_ptr, x_size and x_left count units).
  logic [31:0] row_addr, x_stride;
  logic [UW-1:0] sram_ptr, x_size, x_left;
  logic [15:0] y_left;  // rows still to request
  logic [1:0] buf_id;
  logic push_next;
  logic [31:0] id_q;

  // Units per 64-byte request, unit size in bytes and segment bits of the current buffer.
  logic [3:0] max_chunk;
  logic [6:0] ebytes;
  logic [2:0] seg_bits;
  always_comb begin
    unique case (buf_id)
      BUF_WGT: begin
        max_chunk = 4'(DRAM_REQ_BYTES / WGT_UNIT); ebytes = 7'(WGT_UNIT); seg_bits = 3'(WGT_SB);
      end
      BUF_ACC: begin
        max_chunk = 4'(DRAM_REQ_BYTES / ACC_UNIT); ebytes = 7'(ACC_UNIT); seg_bits = 3'(ACC_SB);
      end
      default: begin
        max_chunk = 4'(DRAM_REQ_BYTES / INP_UNIT); ebytes = 7'(INP_UNIT); seg_bits = 3'(INP_SB);
      end
    endcase
  end

  // Tags: one data slot each.
  logic [7:0] tag_busy;
  logic [UW-1:0] tag_sram[8];
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

  logic [2:0] cmd_seg_bits;  // segment bits of the buffer the queued command names
  always_comb begin
    unique case (q_cmd[113:112])
      BUF_WGT: cmd_seg_bits = 3'(WGT_SB);
      BUF_ACC: cmd_seg_bits = 3'(ACC_SB);
      default: cmd_seg_bits = 3'(INP_SB);
    endcase
  end

  logic more_reqs;
  assign more_reqs = state == LD_RUN && y_left != 0;
  logic [UW-1:0] chunk16;
  assign chunk16 = (x_left < UW'(max_chunk)) ? x_left : UW'(max_chunk);

  assign req_valid = ce && more_reqs && have_free;
  assign req_addr = row_addr + ((32'(x_size) - 32'(x_left)) * {25'd0, ebytes});
  assign req_size = chunk16[6:0] * ebytes;
  assign req_tag = free_tag;

  logic [2:0] wtag;
  assign wtag = wq[wq_rd];
  assign wr_en = ce && wq_level != 0;
  assign wr_buf = buf_id;
  logic [UW-1:0] wr_unit;  // unit the head of the write queue writes
  assign wr_unit = tag_sram[wtag] + UW'(wr_idx);
  assign wr_addr = 16'(wr_unit >> seg_bits);
  assign wr_seg = SEG_BITS'(wr_unit & ~(UW'('1) << seg_bits));
  always_comb begin
    unique case (buf_id)
      BUF_WGT: wr_data = (tag_data[wtag] >> (32'(wr_idx) * WGT_UNIT * 8)) & (ONES >> (512 - WGT_UNIT * 8));
      BUF_ACC: wr_data = (tag_data[wtag] >> (32'(wr_idx) * ACC_UNIT * 8)) & (ONES >> (512 - ACC_UNIT * 8));
      default: wr_data = (tag_data[wtag] >> (32'(wr_idx) * INP_UNIT * 8)) & (ONES >> (512 - INP_UNIT * 8));
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
          sram_ptr <= UW'(q_cmd[111:96]) << cmd_seg_bits;
          buf_id <= q_cmd[113:112];
          y_left <= q_cmd[143:128];
          x_size <= UW'(q_cmd[159:144]) << cmd_seg_bits;
          x_left <= UW'(q_cmd[159:144]) << cmd_seg_bits;
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
