// Compute engine: executes GEMM (R x C MAC array, R = ARRAY_ROWS and C = ARRAY_COLS of npu_pkg:
// int8: one R-lane input row x one R x C weight block per cycle into int32 lanes; BF16: one
// R/2-lane bf16 row x one R/2 x C bf16 block per cycle into fp32 lanes, the same entries read)
// and POST (int32 -> int8 requantisation, one ACC entry of C lanes per cycle; or the float path:
// int32 or fp32 lanes, times a bf16 scale, to int8 or bf16, a BF16 output taking two cycles and
// two OUT entries per ACC entry; per channel: each lane's factor from a scale entry in ACC, read
// through port a once per group of entries that share it) from the compute queue, one command at
// a time (docs/isa.md).
// Two-stage pipeline: S0 issues scratchpad reads, S1 computes and writes.
// Tokens: pop_prev (L->C) and pop_next (S->C) before starting; push_prev (C->L) and push_next
// (C->S) once the pipeline has drained.
module npu_compute
  import npu_pkg::*;
  import npu_fp_pkg::*;
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
    input logic tok_prev_avail,   // L->C
    input logic tok_next_avail,   // S->C
    output logic tok_prev_pop,
    output logic tok_next_pop,
    input logic tok_prev_full,    // C->L
    input logic tok_next_full,    // C->S
    output logic tok_prev_push,
    output logic tok_next_push,
    // INP / WGT reads (high-priority ports)
    output logic inp_rd_en,
    output logic [15:0] inp_rd_addr,
    input logic [ARRAY_ROWS*8-1:0] inp_rd_data,
    output logic wgt_rd_en,
    output logic [15:0] wgt_rd_addr,
    input logic [ARRAY_ROWS*ARRAY_COLS*8-1:0] wgt_rd_data,
    // ACC read (gemm: high-priority port a; post: port b) and write (gemm: high-priority port)
    output logic acc_rda_en,
    output logic [15:0] acc_rda_addr,
    input logic [ARRAY_COLS*32-1:0] acc_rda_data,
    output logic acc_rdb_en,
    output logic [15:0] acc_rdb_addr,
    input logic [ARRAY_COLS*32-1:0] acc_rdb_data,
    input logic acc_rdb_gnt,
    output logic acc_wr_en,
    output logic [15:0] acc_wr_addr,
    output logic [ARRAY_COLS*32-1:0] acc_wr_data,
    // OUT write (high-priority port)
    output logic out_wr_en,
    output logic [15:0] out_wr_addr,
    output logic [ARRAY_COLS*8-1:0] out_wr_data,
    // status / PMU
    output logic busy,
    output logic [31:0] cur_id,
    output logic retire_gemm,
    output logic retire_post,
    output logic macs_issue,
    output logic macs_bf16,
    output logic [MACS_W-1:0] macs_useful,
    output logic [SAT_W-1:0] sat_count,
    output logic [2:0] gemm_cls,
    output logic [2:0] post_cls
);
  localparam int R = ARRAY_ROWS, C = ARRAY_COLS, L = ARRAY_ROWS / 2;  // L: bf16 lanes
  // State encodings: npu_pkg::compute_state_t (rtl/npu_facts.toml).
  compute_state_t state;

  logic is_post;  // current command is POST (else GEMM)
  logic pop_prev, pop_next, push_prev, push_next;
  logic [31:0] id_q;
  // GEMM fields and loop state
  logic [15:0] wgt_base;
  logic reset_acc;
  logic bf16;  // GEMM: BF16 operands, fp32 accumulators
  logic [15:0] kb_total, nb_total, kb, nb, k_elems, n_elems;
  logic [15:0] m_left;  // GEMM rows left
  logic [15:0] inp_row, wgt_row, acc_ptr;
  // POST fields. Entry j (0 <= j < count) is ACC acc0 + j -> OUT out0 + j (x2 for a bf16
  // output). Per channel, entries go group by group: group g is j = g, g + period, ... and its
  // lanes' factors come from the scale entry scale_base + g, read through port a (idle during
  // POST) in one cycle before the group; port a's data register then holds it for the group.
  logic [15:0] post_acc0, post_out0, post_count, post_j, post_grp, period, scale_base;
  logic per_ch, scale_pend;
  logic signed [15:0] mult;
  logic [4:0] shift;
  logic signed [7:0] clamp_lo, clamp_hi;
  logic src_fp32, dst_bf16, post_relu;  // POST float path (src_fp32 || dst_bf16)
  logic [15:0] scale;                   // its bf16 scale (the mult field)
  logic post_half;                      // BF16 output: which half of the ACC entry

  // ---------------------------------------------------------------- S0: issue
  logic s0_gemm, s0_post;
  assign s0_gemm = ce && state == CMP_GEMM;
  assign s0_post = ce && state == CMP_POST && !scale_pend && acc_rdb_gnt;
  logic first_k, last_k;
  assign first_k = kb == 0;
  assign last_k = kb + 16'd1 == kb_total;

  assign inp_rd_en = s0_gemm;
  assign inp_rd_addr = inp_row + kb;
  assign wgt_rd_en = s0_gemm;
  assign wgt_rd_addr = wgt_row + kb;
  logic s0_scale;
  assign s0_scale = ce && state == CMP_POST && scale_pend;
  assign acc_rda_en = (s0_gemm && first_k && !reset_acc) || s0_scale;
  assign acc_rda_addr = s0_scale ? scale_base + post_grp : acc_ptr;
  assign acc_rdb_en = ce && state == CMP_POST && !scale_pend;
  assign acc_rdb_addr = post_acc0 + post_j;
  logic [15:0] out_ptr;
  assign out_ptr = post_out0 + (dst_bf16 ? {post_j[14:0], post_half} : post_j);

  // Useful lanes of this iteration: min(KL, K - kb*KL) x min(C, N - nb*C), KL = R (int8) or L.
  localparam int LR = $clog2(R), LC = $clog2(C);
  logic [15:0] k_rem, n_rem;
  assign k_rem = k_elems - (bf16 ? (kb << (LR - 1)) : (kb << LR));
  assign n_rem = n_elems - (nb << LC);
  logic [LR:0] k_lanes, k_width;
  logic [LC:0] n_lanes;
  assign k_width = bf16 ? (LR + 1)'(L) : (LR + 1)'(R);
  assign k_lanes = (k_rem >= 16'(k_width)) ? k_width : k_rem[LR:0];
  assign n_lanes = (n_rem >= 16'(C)) ? (LC + 1)'(C) : n_rem[LC:0];
  assign macs_issue = s0_gemm;
  assign macs_bf16 = bf16;
  assign macs_useful = s0_gemm ? MACS_W'(k_lanes * n_lanes) : '0;

  // ---------------------------------------------------------------- S1: compute and write
  logic s1_gemm, s1_post, s1_first, s1_last, s1_reset, s1_bf16, s1_half;
  logic [15:0] s1_acc_addr, s1_out_addr;
  logic signed [31:0] accum[C];

  logic signed [31:0] dot[C];
  logic signed [31:0] gemm_sum[C];
  always_comb begin
    logic signed [7:0] a, b;
    logic signed [15:0] prod;
    logic [31:0] lvl[L];
    logic [31:0] base;
    a = '0;
    b = '0;
    prod = '0;
    for (int i = 0; i < L; i++) lvl[i] = '0;
    for (int o = 0; o < C; o++) begin
      dot[o] = 32'sd0;
      base = s1_first ? (s1_reset ? 32'd0 : acc_rda_data[o*32+:32]) : accum[o];
      if (s1_bf16) begin
        // Balanced tree over the L products, pairs (2i, 2i+1) level by level; then + the
        // accumulator (docs/isa.md, "BF16 GEMM").
        for (int i = 0; i < L; i++)
          lvl[i] = bf16_mul(inp_rd_data[i*16+:16], wgt_rd_data[(o*L+i)*16+:16]);
        for (int w = L; w > 1; w = w / 2)
          for (int i = 0; i < w / 2; i++) lvl[i] = fp32_add(lvl[2*i], lvl[2*i+1]);
        gemm_sum[o] = fp32_add(base, lvl[0]);
      end else begin
        for (int i = 0; i < R; i++) begin
          a = inp_rd_data[i*8+:8];
          b = wgt_rd_data[(o*R+i)*8+:8];
          prod = a * b;
          dot[o] = dot[o] + 32'(prod);
        end
        gemm_sum[o] = base + dot[o];
      end
    end
  end

  logic [C*8-1:0] post_val;
  logic [SAT_W-1:0] sats;
  // Float path, per lane: v = fp32 lane (or int32 -> fp32), p = bf16(v) x scale (exact in fp32),
  // then p -> int8 (nearest even, saturating) or -> bf16 (nearest even, ReLU optional).
  // A lane's factor: the command's, or per channel lane `l` of the scale entry (port a's data).
  function automatic logic [15:0] lane_scale(input int l);
    return per_ch ? acc_rda_data[l*32+:16] : scale;
  endfunction
  function automatic logic [4:0] lane_shift(input int l);
    return per_ch ? acc_rda_data[l*32+16+:5] : shift;
  endfunction
  function automatic logic [31:0] post_product(input logic [31:0] lane, input logic [15:0] f);
    logic [31:0] v;
    v = src_fp32 ? lane : int32_to_fp32(lane);
    return bf16_mul(fp32_to_bf16(v), f);
  endfunction
  always_comb begin
    logic signed [63:0] p, r;
    logic signed [7:0] s;
    logic [8:0] q;
    logic [15:0] h;
    logic [4:0] sh;
    sh = '0;
    p = '0;
    r = '0;
    s = '0;
    q = '0;
    h = '0;
    sats = '0;
    post_val = '0;
    if (dst_bf16) begin
      for (int j = 0; j < L; j++) begin
        h = fp32_to_bf16(post_product(acc_rdb_data[(32'(s1_half)*L+j)*32+:32],
                                      lane_scale(int'(s1_half) * L + j)));
        if (post_relu && h[15] && !(h[14:7] == 8'hff && h[6:0] != 7'd0)) h = 16'h0000;
        post_val[j*16+:16] = h;
      end
    end else begin
      for (int l = 0; l < C; l++) begin
        if (src_fp32) begin
          q = fp32_to_int8(post_product(acc_rdb_data[l*32+:32], lane_scale(l)));
          s = q[7:0];
          if (q[8]) sats = sats + 1'b1;
        end else begin
          sh = lane_shift(l);
          p = 64'(signed'(acc_rdb_data[l*32+:32])) * 64'(signed'(per_ch ? lane_scale(l) : mult));
          r = (sh == 0) ? p : ((p + (64'sd1 <<< (sh - 5'd1))) >>> sh);
          if (r > 64'sd127) begin
            s = 8'sd127;
            sats = sats + 1'b1;
          end else if (r < -64'sd128) begin
            s = -8'sd128;
            sats = sats + 1'b1;
          end else begin
            s = r[7:0];
          end
        end
        if (s < clamp_lo) s = clamp_lo;
        if (s > clamp_hi) s = clamp_hi;
        post_val[l*8+:8] = s;
      end
    end
  end

  assign acc_wr_en = ce && s1_gemm && s1_last;
  assign acc_wr_addr = s1_acc_addr;
  always_comb for (int o = 0; o < C; o++) acc_wr_data[o*32+:32] = gemm_sum[o];
  assign out_wr_en = ce && s1_post;
  assign out_wr_addr = s1_out_addr;
  assign out_wr_data = post_val;
  assign sat_count = out_wr_en ? sats : '0;

  // ---------------------------------------------------------------- control
  assign q_pop = ce && state == CMP_IDLE && !q_empty;
  logic tokens_ok;
  assign tokens_ok = (!pop_prev || tok_prev_avail) && (!pop_next || tok_next_avail);
  assign tok_prev_pop = ce && state == CMP_TOKEN && tokens_ok && pop_prev;
  assign tok_next_pop = ce && state == CMP_TOKEN && tokens_ok && pop_next;
  logic push_ok;
  assign push_ok = (!push_prev || !tok_prev_full) && (!push_next || !tok_next_full);
  assign tok_prev_push = ce && state == CMP_PUSH && push_ok && push_prev;
  assign tok_next_push = ce && state == CMP_PUSH && push_ok && push_next;
  logic finish;
  assign finish = ce && state == CMP_PUSH && push_ok;
  assign retire_gemm = finish && !is_post;
  assign retire_post = finish && is_post;
  assign busy = state != CMP_IDLE;
  assign cur_id = id_q;

  logic last_iter;
  assign last_iter = last_k && nb + 16'd1 == nb_total && m_left == 16'd1;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      state <= CMP_IDLE;
      s1_gemm <= 1'b0;
      s1_post <= 1'b0;
      id_q <= '0;
    end else if (ce) begin
      // S1 registers
      s1_gemm <= s0_gemm;
      s1_post <= s0_post;
      s1_first <= first_k;
      s1_last <= last_k;
      s1_reset <= reset_acc;
      s1_bf16 <= bf16;
      s1_half <= post_half;
      s1_acc_addr <= acc_ptr;
      s1_out_addr <= out_ptr;
      if (s1_gemm && !s1_last) begin
        for (int o = 0; o < C; o++) accum[o] <= gemm_sum[o];
      end

      unique case (state)
        CMP_IDLE:
        if (!q_empty) begin
          is_post <= q_cmd[3:0] == OP_POST;
          {push_next, push_prev, pop_next, pop_prev} <= q_cmd[7:4];
          id_q <= q_cmd[63:32];
          wgt_base <= q_cmd[95:80];
          reset_acc <= q_cmd[112];
          bf16 <= q_cmd[3:0] == OP_GEMM && q_cmd[113];
          inp_row <= q_cmd[79:64];
          wgt_row <= q_cmd[95:80];
          acc_ptr <= q_cmd[111:96];
          m_left <= q_cmd[143:128];
          k_elems <= q_cmd[159:144];
          n_elems <= q_cmd[175:160];
          kb_total <= q_cmd[113] ? (q_cmd[159:144] + 16'(L - 1)) >> (LR - 1)
                                 : (q_cmd[159:144] + 16'(R - 1)) >> LR;
          nb_total <= (q_cmd[175:160] + 16'(C - 1)) >> LC;
          kb <= '0;
          nb <= '0;
          // POST view of the same words
          post_acc0 <= q_cmd[79:64];
          post_out0 <= q_cmd[95:80];
          post_count <= q_cmd[111:96];
          post_j <= '0;
          post_grp <= '0;
          per_ch <= q_cmd[3:0] == OP_POST && q_cmd[115];
          scale_pend <= q_cmd[3:0] == OP_POST && q_cmd[115];
          scale_base <= q_cmd[207:192];
          period <= (q_cmd[115] && q_cmd[223:208] != 16'd0) ? q_cmd[223:208] : 16'd1;
          mult <= q_cmd[143:128];
          shift <= q_cmd[148:144];
          clamp_lo <= q_cmd[167:160];
          clamp_hi <= q_cmd[175:168];
          src_fp32 <= q_cmd[3:0] == OP_POST && q_cmd[112];
          dst_bf16 <= q_cmd[3:0] == OP_POST && q_cmd[113];
          post_relu <= q_cmd[114];
          scale <= q_cmd[143:128];
          post_half <= 1'b0;
          state <= CMP_TOKEN;
        end
        CMP_TOKEN:
        if (tokens_ok) begin
          if (is_post) state <= (post_count == 0) ? CMP_DRAIN : CMP_POST;
          else state <= (m_left == 0 || kb_total == 0 || nb_total == 0) ? CMP_DRAIN : CMP_GEMM;
        end
        CMP_GEMM: begin
          if (last_k) begin
            kb <= '0;
            acc_ptr <= acc_ptr + 16'd1;
            if (nb + 16'd1 == nb_total) begin
              nb <= '0;
              m_left <= m_left - 16'd1;
              inp_row <= inp_row + kb_total;
              wgt_row <= wgt_base;
            end else begin
              nb <= nb + 16'd1;
              wgt_row <= wgt_row + kb_total;
            end
          end else begin
            kb <= kb + 16'd1;
          end
          if (last_iter) state <= CMP_DRAIN;
        end
        CMP_POST:
        if (scale_pend) begin
          scale_pend <= 1'b0;  // the scale entry is read this cycle
        end else if (acc_rdb_gnt) begin
          // A BF16 output writes two OUT entries per ACC entry (lanes [0, L) then [L, C)).
          if (dst_bf16) post_half <= !post_half;
          if (!dst_bf16 || post_half) begin
            if (32'(post_j) + 32'(period) < 32'(post_count)) begin
              post_j <= post_j + period;
            end else if (32'(post_grp) + 1 < 32'(period) && 32'(post_grp) + 1 < 32'(post_count))
            begin
              post_grp <= post_grp + 16'd1;
              post_j <= post_grp + 16'd1;
              scale_pend <= 1'b1;
            end else begin
              state <= CMP_DRAIN;
            end
          end
        end
        CMP_DRAIN: if (!s1_gemm && !s1_post) state <= CMP_PUSH;
        CMP_PUSH: if (push_ok) state <= CMP_IDLE;
        default: state <= CMP_IDLE;
      endcase
    end
  end

  // PMU: gemm and post share the engine; each is classified by the command it owns.
  function automatic logic [2:0] classify(input logic mine);
    if (!ce) return CLS_THROTTLED;
    if (!running && state == CMP_IDLE) return CLS_IDLE;
    if (!mine || state == CMP_IDLE) return CLS_STARVE;
    if (state == CMP_TOKEN) return tokens_ok ? CLS_ACTIVE : CLS_STALL_DEP;
    if (state == CMP_PUSH) return push_ok ? CLS_ACTIVE : CLS_STALL_OUT;
    if (state == CMP_POST && !scale_pend && !acc_rdb_gnt) return CLS_STALL_MEM;
    return CLS_ACTIVE;
  endfunction
  assign gemm_cls = classify(!is_post);
  assign post_cls = classify(is_post);
endmodule
