// NPU top level: CSRs, command fetch, the three decoupled engines with their queues and token
// FIFOs, the banked scratchpads, the DRAM arbiter, the PMU, observation ports and assertions.
// See docs/isa.md for the contract and docs/architecture.md for how it fits in bud.
module npu_top
  import npu_pkg::*;
(
    input logic clk,
    input logic rst_n,
    input logic throttle,
    // host CSR port
    input logic csr_valid,
    input logic csr_write,
    input logic [7:0] csr_addr,
    input logic [31:0] csr_wdata,
    output logic [31:0] csr_rdata,
    output logic irq,
    // DRAM port
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
    input logic [511:0] dram_resp_rdata,
    // stage observation ports
    output logic obs_dec_valid,
    output logic [255:0] obs_dec_cmd,
    output logic obs_ld_valid,
    output logic [31:0] obs_ld_id,
    output logic [1:0] obs_ld_buf,
    output logic [15:0] obs_ld_addr,
    output logic [511:0] obs_ld_data,
    output logic [SEG_BITS-1:0] obs_ld_seg,  // segment of an entry wider than a DRAM request
    output logic obs_acc_valid,
    output logic [31:0] obs_acc_id,
    output logic [15:0] obs_acc_addr,
    output logic [ACC_BYTES*8-1:0] obs_acc_data,
    output logic obs_out_valid,
    output logic [31:0] obs_out_id,
    output logic [15:0] obs_out_addr,
    output logic [OUT_BYTES*8-1:0] obs_out_data,
    output logic obs_st_valid,
    output logic [31:0] obs_st_id,
    output logic [31:0] obs_st_addr,
    output logic [6:0] obs_st_size,
    output logic [511:0] obs_st_data,
    // status for the harness
    output logic running,
    // assertion port: the first assertion that fired, latched (rtl/npu_facts.toml [[assertion]])
    output logic [7:0] assert_code,     // its code (0: none)
    output logic [2:0] assert_engine,   // the engine it implicates (ENG_*)
    output logic [31:0] assert_cmd,     // the command that engine held (fetch: ring index)
    output logic [31:0] assert_value0,  // the assertion's values (their meaning: the table)
    output logic [31:0] assert_value1,
    output logic [63:0] assert_cycle    // the cycle it fired at
);
  logic ce;
  assign ce = !throttle;

  logic [63:0] cycle;
  always_ff @(posedge clk) cycle <= !rst_n ? 64'd0 : cycle + 64'd1;

  // ------------------------------------------------------------------ CSRs
  logic irq_enable, irq_pending, done, error;
  logic [31:0] ring_base;
  logic [15:0] ring_size, ring_tail;
  logic pmu_enable;
  logic [6:0] pmu_sel;
  logic [31:0] end_code, err_info;
  logic [15:0] head;
  logic [63:0] pmu_sel_value;
  logic csr_wr;
  assign csr_wr = csr_valid && csr_write;
  logic doorbell, head_reset, pmu_clear, pmu_snapshot;
  assign doorbell = csr_wr && csr_addr == CSR_DOORBELL;
  assign head_reset = csr_wr && csr_addr == CSR_HEAD_RESET;
  assign pmu_clear = csr_wr && csr_addr == CSR_PMU_CTRL && csr_wdata[1];
  assign pmu_snapshot = csr_wr && csr_addr == CSR_PMU_CTRL && csr_wdata[2];
  logic done_pulse, error_pulse;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      irq_enable <= 1'b0;
      irq_pending <= 1'b0;
      done <= 1'b0;
      error <= 1'b0;
      ring_base <= '0;
      ring_size <= 16'd1;
      ring_tail <= '0;
      pmu_enable <= 1'b1;
      pmu_sel <= '0;
    end else begin
      if (csr_wr) begin
        unique case (csr_addr)
          CSR_CTRL: irq_enable <= csr_wdata[0];
          CSR_IRQ: if (csr_wdata[0]) irq_pending <= 1'b0;
          CSR_RING_BASE: ring_base <= {csr_wdata[31:5], 5'd0};
          CSR_RING_SIZE: ring_size <= (csr_wdata[15:0] == 0) ? 16'd1 : csr_wdata[15:0];
          CSR_RING_TAIL: ring_tail <= csr_wdata[15:0];
          CSR_PMU_CTRL: pmu_enable <= csr_wdata[0];
          CSR_PMU_SEL: pmu_sel <= csr_wdata[6:0];
          default: ;
        endcase
      end
      if (doorbell && !running) begin
        done <= 1'b0;
        error <= 1'b0;
      end
      if (done_pulse) begin
        done <= 1'b1;
        if (irq_enable) irq_pending <= 1'b1;
      end
      if (error_pulse) begin
        error <= 1'b1;
        if (irq_enable) irq_pending <= 1'b1;
      end
    end
  end
  assign irq = irq_pending;

  always_comb begin
    unique case (csr_addr)
      CSR_ID: csr_rdata = ID_VALUE;
      CSR_CONFIG: csr_rdata = {8'd0, 8'd4, 8'(ARRAY_COLS), 8'(ARRAY_ROWS)};
      CSR_SPAD_CFG: csr_rdata = SPAD_CFG_VALUE;
      CSR_CTRL: csr_rdata = {31'd0, irq_enable};
      CSR_STATUS: csr_rdata = {29'd0, error, done, running};
      CSR_IRQ: csr_rdata = {31'd0, irq_pending};
      CSR_RING_BASE: csr_rdata = ring_base;
      CSR_RING_SIZE: csr_rdata = {16'd0, ring_size};
      CSR_RING_HEAD: csr_rdata = {16'd0, head};
      CSR_RING_TAIL: csr_rdata = {16'd0, ring_tail};
      CSR_END_CODE: csr_rdata = end_code;
      CSR_ERR_INFO: csr_rdata = err_info;
      CSR_PMU_CTRL: csr_rdata = {31'd0, pmu_enable};
      CSR_PMU_SEL: csr_rdata = {25'd0, pmu_sel};
      CSR_PMU_LO: csr_rdata = pmu_sel_value[31:0];
      CSR_PMU_HI: csr_rdata = pmu_sel_value[63:32];
      CSR_PMU_COUNT: csr_rdata = NUM_COUNTERS;
      default: csr_rdata = 32'd0;
    endcase
  end

  // ------------------------------------------------------------------ queues and tokens
  logic [255:0] fetch_cmd;
  logic ldq_push, cmpq_push, stq_push, ldq_pop, cmpq_pop, stq_pop;
  logic ldq_empty, cmpq_empty, stq_empty, ldq_full, cmpq_full, stq_full;
  logic [255:0] ldq_head, cmpq_head, stq_head;
  // Queue occupancy: read by the debugger only (rtl/npu_debug.vlt).
  /* verilator lint_off UNUSEDSIGNAL */
  logic [3:0] ldq_level;
  logic [3:0] cmpq_level;
  logic [3:0] stq_level;
  /* verilator lint_on UNUSEDSIGNAL */
  logic [2:0] q_overflow;

  npu_fifo #(.WIDTH(256), .DEPTH(8)) u_ldq (
      .clk, .rst_n, .clear(1'b0), .push(ldq_push), .push_data(fetch_cmd), .pop(ldq_pop),
      .head(ldq_head), .empty(ldq_empty), .full(ldq_full), .level(ldq_level),
      .overflow(q_overflow[0]));
  npu_fifo #(.WIDTH(256), .DEPTH(8)) u_cmpq (
      .clk, .rst_n, .clear(1'b0), .push(cmpq_push), .push_data(fetch_cmd), .pop(cmpq_pop),
      .head(cmpq_head), .empty(cmpq_empty), .full(cmpq_full), .level(cmpq_level),
      .overflow(q_overflow[1]));
  npu_fifo #(.WIDTH(256), .DEPTH(8)) u_stq (
      .clk, .rst_n, .clear(1'b0), .push(stq_push), .push_data(fetch_cmd), .pop(stq_pop),
      .head(stq_head), .empty(stq_empty), .full(stq_full), .level(stq_level),
      .overflow(q_overflow[2]));

  // Token FIFOs as counters: 0 L->C, 1 C->L, 2 C->S, 3 S->C.
  logic [7:0] tokens[4];
  logic tok_push[4], tok_pop[4];
  always_ff @(posedge clk) begin
    for (int t = 0; t < 4; t++) begin
      if (!rst_n || (doorbell && !running)) tokens[t] <= '0;
      else tokens[t] <= tokens[t] + {7'd0, tok_push[t]} - {7'd0, tok_pop[t]};
    end
  end

  // ------------------------------------------------------------------ engines
  logic fetch_req_valid, load_req_valid, store_req_valid;
  logic [31:0] fetch_req_addr, load_req_addr, store_req_addr;
  logic [6:0] load_req_size, store_req_size;
  logic [2:0] fetch_req_tag, load_req_tag, store_req_tag;
  logic [511:0] store_req_data;
  logic src_fire[3], resp_fire[3];
  logic load_busy, compute_busy, store_busy;
  logic [31:0] load_id, compute_id, store_id;
  logic [2:0] cls[NUM_ENGINES];
  logic machine_idle;
  logic retire_sync, retire_end, retire_load, retire_gemm, retire_post, retire_store;
  assign machine_idle = ldq_empty && cmpq_empty && stq_empty && !load_busy && !compute_busy &&
                        !store_busy;

  npu_fetch u_fetch (
      .clk, .rst_n, .ce, .start(doorbell), .ring_base, .ring_size, .ring_tail, .head_reset,
      .running, .head, .done_pulse, .end_code, .error_pulse, .err_info,
      .req_valid(fetch_req_valid), .req_addr(fetch_req_addr), .req_tag(fetch_req_tag),
      .req_fire(src_fire[0]), .resp_fire(resp_fire[0]), .resp_tag(dram_resp_tag[1:0]),
      .resp_data(dram_resp_rdata[255:0]), .cmd(fetch_cmd), .ldq_push, .cmpq_push, .stq_push,
      .ldq_full, .cmpq_full, .stq_full, .machine_idle, .obs_valid(obs_dec_valid),
      .retire_sync, .retire_end, .cls(cls[0]));
  assign obs_dec_cmd = fetch_cmd;

  // Scratchpad wires.
  logic inp_ra_en, wgt_ra_en;
  logic [15:0] inp_ra_addr, wgt_ra_addr;
  logic [INP_BYTES*8-1:0] inp_ra_data;
  logic [WGT_BYTES*8-1:0] wgt_ra_data;
  logic ld_wr_en, ld_wr_gnt;
  logic [1:0] ld_wr_buf;
  logic [15:0] ld_wr_addr;
  logic [511:0] ld_wr_data;
  logic [SEG_BITS-1:0] ld_wr_seg;
  logic acc_ra_en, acc_rb_en, acc_rb_gnt, acc_wa_en;
  logic [15:0] acc_ra_addr, acc_rb_addr, acc_wa_addr;
  logic [ACC_BYTES*8-1:0] acc_ra_data, acc_rb_data, acc_wa_data;
  logic out_wa_en, st_rd_en, st_rd_gnt;
  logic [15:0] out_wa_addr, st_rd_addr;
  logic [OUT_BYTES*8-1:0] out_wa_data, st_rd_data;
  logic [1:0] conflicts[4];
  logic [3:0] range_err_port[4];  // per buffer: {wb, wa, rb, ra}
  logic [3:0] range_err;          // per buffer: any port
  logic inp_wb_gnt, wgt_wb_gnt, acc_wb_gnt;

  npu_load u_load (
      .clk, .rst_n, .ce, .running, .q_cmd(ldq_head), .q_empty(ldq_empty), .q_pop(ldq_pop),
      .tok_in_avail(tokens[1] != 0), .tok_in_pop(tok_pop[1]),
      .tok_out_full(tokens[0] == 8'd255), .tok_out_push(tok_push[0]),
      .req_valid(load_req_valid), .req_addr(load_req_addr), .req_size(load_req_size),
      .req_tag(load_req_tag), .req_fire(src_fire[1]), .resp_fire(resp_fire[1]),
      .resp_tag(dram_resp_tag[2:0]), .resp_data(dram_resp_rdata),
      .wr_en(ld_wr_en), .wr_buf(ld_wr_buf), .wr_addr(ld_wr_addr), .wr_data(ld_wr_data), .wr_seg(ld_wr_seg),
      .wr_gnt(ld_wr_gnt), .busy(load_busy), .cur_id(load_id), .retire(retire_load),
      .cls(cls[1]));

  logic macs_issue;
  logic macs_bf16;
  logic [MACS_W-1:0] macs_useful;
  logic [SAT_W-1:0] sat_count;
  npu_compute u_compute (
      .clk, .rst_n, .ce, .running, .q_cmd(cmpq_head), .q_empty(cmpq_empty), .q_pop(cmpq_pop),
      .tok_prev_avail(tokens[0] != 0), .tok_next_avail(tokens[3] != 0),
      .tok_prev_pop(tok_pop[0]), .tok_next_pop(tok_pop[3]),
      .tok_prev_full(tokens[1] == 8'd255), .tok_next_full(tokens[2] == 8'd255),
      .tok_prev_push(tok_push[1]), .tok_next_push(tok_push[2]),
      .inp_rd_en(inp_ra_en), .inp_rd_addr(inp_ra_addr), .inp_rd_data(inp_ra_data),
      .wgt_rd_en(wgt_ra_en), .wgt_rd_addr(wgt_ra_addr), .wgt_rd_data(wgt_ra_data),
      .acc_rda_en(acc_ra_en), .acc_rda_addr(acc_ra_addr), .acc_rda_data(acc_ra_data),
      .acc_rdb_en(acc_rb_en), .acc_rdb_addr(acc_rb_addr), .acc_rdb_data(acc_rb_data),
      .acc_rdb_gnt(acc_rb_gnt), .acc_wr_en(acc_wa_en), .acc_wr_addr(acc_wa_addr),
      .acc_wr_data(acc_wa_data), .out_wr_en(out_wa_en), .out_wr_addr(out_wa_addr),
      .out_wr_data(out_wa_data), .busy(compute_busy), .cur_id(compute_id),
      .retire_gemm, .retire_post, .macs_issue, .macs_bf16, .macs_useful, .sat_count,
      .gemm_cls(cls[2]), .post_cls(cls[3]));

  npu_store u_store (
      .clk, .rst_n, .ce, .running, .q_cmd(stq_head), .q_empty(stq_empty), .q_pop(stq_pop),
      .tok_in_avail(tokens[2] != 0), .tok_in_pop(tok_pop[2]),
      .tok_out_full(tokens[3] == 8'd255), .tok_out_push(tok_push[3]),
      .rd_en(st_rd_en), .rd_addr(st_rd_addr), .rd_data(st_rd_data), .rd_gnt(st_rd_gnt),
      .req_valid(store_req_valid), .req_addr(store_req_addr), .req_size(store_req_size),
      .req_tag(store_req_tag), .req_data(store_req_data), .req_fire(src_fire[2]),
      .resp_fire(resp_fire[2]), .resp_tag(dram_resp_tag[2:0]), .busy(store_busy),
      .cur_id(store_id), .retire(retire_store), .cls(cls[4]));

  // ------------------------------------------------------------------ scratchpads
  logic inp_wb_en, wgt_wb_en, acc_wb_en;
  assign inp_wb_en = ld_wr_en && ld_wr_buf == BUF_INP;
  assign wgt_wb_en = ld_wr_en && ld_wr_buf == BUF_WGT;
  assign acc_wb_en = ld_wr_en && ld_wr_buf == BUF_ACC;
  assign ld_wr_gnt = inp_wb_gnt || wgt_wb_gnt || acc_wb_gnt;

  /* verilator lint_off PINCONNECTEMPTY */
  // Load writes a unit (port wb): an entry, or a 64-byte segment of a wider one.
  localparam int INP_WB = INP_BYTES < DRAM_REQ_BYTES ? INP_BYTES : DRAM_REQ_BYTES;
  localparam int WGT_WB = WGT_BYTES < DRAM_REQ_BYTES ? WGT_BYTES : DRAM_REQ_BYTES;
  localparam int ACC_WB = ACC_BYTES < DRAM_REQ_BYTES ? ACC_BYTES : DRAM_REQ_BYTES;
  npu_spad #(.WIDTH(INP_BYTES * 8), .DEPTH(INP_DEPTH), .BANKS(INP_BANKS), .SINGLE_PORT(1),
             .WB_WIDTH(INP_WB * 8), .SEG_BITS(SEG_BITS)) u_inp (
      .clk, .ra_en(inp_ra_en), .ra_addr(inp_ra_addr), .ra_data(inp_ra_data),
      .rb_en(1'b0), .rb_addr(16'd0), .rb_data(), .rb_gnt(),
      .wa_en(1'b0), .wa_addr(16'd0), .wa_data('0),
      .wb_en(inp_wb_en), .wb_addr(ld_wr_addr), .wb_data(ld_wr_data[INP_WB*8-1:0]),
      .wb_seg(ld_wr_seg), .wb_gnt(inp_wb_gnt),
      .conflicts(conflicts[0]), .range_error(range_err_port[0]));
  npu_spad #(.WIDTH(WGT_BYTES * 8), .DEPTH(WGT_DEPTH), .BANKS(WGT_BANKS), .SINGLE_PORT(1),
             .WB_WIDTH(WGT_WB * 8), .SEG_BITS(SEG_BITS)) u_wgt (
      .clk, .ra_en(wgt_ra_en), .ra_addr(wgt_ra_addr), .ra_data(wgt_ra_data),
      .rb_en(1'b0), .rb_addr(16'd0), .rb_data(), .rb_gnt(),
      .wa_en(1'b0), .wa_addr(16'd0), .wa_data('0),
      .wb_en(wgt_wb_en), .wb_addr(ld_wr_addr), .wb_data(ld_wr_data[WGT_WB*8-1:0]),
      .wb_seg(ld_wr_seg), .wb_gnt(wgt_wb_gnt),
      .conflicts(conflicts[1]), .range_error(range_err_port[1]));
  npu_spad #(.WIDTH(ACC_BYTES * 8), .DEPTH(ACC_DEPTH), .BANKS(ACC_BANKS), .SINGLE_PORT(0),
             .WB_WIDTH(ACC_WB * 8), .SEG_BITS(SEG_BITS)) u_acc (
      .clk, .ra_en(acc_ra_en), .ra_addr(acc_ra_addr), .ra_data(acc_ra_data),
      .rb_en(acc_rb_en), .rb_addr(acc_rb_addr), .rb_data(acc_rb_data), .rb_gnt(acc_rb_gnt),
      .wa_en(acc_wa_en), .wa_addr(acc_wa_addr), .wa_data(acc_wa_data),
      .wb_en(acc_wb_en), .wb_addr(ld_wr_addr), .wb_data(ld_wr_data[ACC_WB*8-1:0]),
      .wb_seg(ld_wr_seg), .wb_gnt(acc_wb_gnt),
      .conflicts(conflicts[2]), .range_error(range_err_port[2]));
  npu_spad #(.WIDTH(OUT_BYTES * 8), .DEPTH(OUT_DEPTH), .BANKS(OUT_BANKS), .SINGLE_PORT(1),
             .SEG_BITS(SEG_BITS)) u_out (
      .clk, .ra_en(1'b0), .ra_addr(16'd0), .ra_data(),
      .rb_en(st_rd_en), .rb_addr(st_rd_addr), .rb_data(st_rd_data), .rb_gnt(st_rd_gnt),
      .wa_en(out_wa_en), .wa_addr(out_wa_addr), .wa_data(out_wa_data),
      .wb_en(1'b0), .wb_addr(16'd0), .wb_data('0), .wb_seg('0), .wb_gnt(),
      .conflicts(conflicts[3]), .range_error(range_err_port[3]));
  /* verilator lint_on PINCONNECTEMPTY */

  // ------------------------------------------------------------------ DRAM arbiter
  logic src_valid[3];
  logic [31:0] src_addr[3];
  logic [6:0] src_size[3];
  logic [2:0] src_tag[3];
  assign src_valid = '{fetch_req_valid, load_req_valid, store_req_valid};
  assign src_addr = '{fetch_req_addr, load_req_addr, store_req_addr};
  assign src_size = '{7'd32, load_req_size, store_req_size};
  assign src_tag = '{fetch_req_tag, load_req_tag, store_req_tag};
  logic [15:0] rd_latency;
  logic unknown_tag;
  npu_dram_arb u_arb (
      .clk, .rst_n, .ce, .now(cycle[31:0]), .src_valid, .src_addr, .src_size, .src_tag,
      .store_data(store_req_data), .src_fire, .dram_req_valid, .dram_req_ready, .dram_req_write,
      .dram_req_addr, .dram_req_size, .dram_req_tag, .dram_req_wdata, .dram_resp_valid,
      .dram_resp_ready, .dram_resp_write, .dram_resp_tag, .resp_fire, .rd_latency, .unknown_tag);

  // ------------------------------------------------------------------ PMU
  logic req_fire_any;
  assign req_fire_any = dram_req_valid && dram_req_ready;
  npu_pmu u_pmu (
      .clk, .rst_n, .enable(pmu_enable), .clear(pmu_clear), .snapshot(pmu_snapshot),
      .sel(pmu_sel), .sel_value(pmu_sel_value), .cls, .macs_issue, .macs_bf16, .macs_useful,
      .rd_bytes((req_fire_any && !dram_req_write) ? dram_req_size : 7'd0),
      .wr_bytes((req_fire_any && dram_req_write) ? dram_req_size : 7'd0),
      .rd_req(req_fire_any && !dram_req_write), .wr_req(req_fire_any && dram_req_write),
      .rd_latency,
      .spad_access({st_rd_gnt && st_rd_en, out_wa_en, acc_wa_en || (acc_wb_en && acc_wb_gnt),
                    acc_ra_en || (acc_rb_en && acc_rb_gnt), wgt_wb_gnt, wgt_ra_en, inp_wb_gnt,
                    inp_ra_en}),
      .conflicts,
      .retired({retire_end, retire_sync, retire_store, retire_post, retire_gemm, retire_load}),
      .saturations(sat_count));

  // ------------------------------------------------------------------ observation ports
  assign obs_ld_valid = ld_wr_gnt;
  assign obs_ld_id = load_id;
  assign obs_ld_buf = ld_wr_buf;
  assign obs_ld_addr = ld_wr_addr;
  assign obs_ld_data = ld_wr_data;
  assign obs_ld_seg = ld_wr_seg;
  assign obs_acc_valid = acc_wa_en;
  assign obs_acc_id = compute_id;
  assign obs_acc_addr = acc_wa_addr;
  assign obs_acc_data = acc_wa_data;
  assign obs_out_valid = out_wa_en;
  assign obs_out_id = compute_id;
  assign obs_out_addr = out_wa_addr;
  assign obs_out_data = out_wa_data;
  assign obs_st_valid = src_fire[2];
  assign obs_st_id = store_id;
  assign obs_st_addr = store_req_addr;
  assign obs_st_size = store_req_size;
  assign obs_st_data = store_req_data;

  always_comb for (int b = 0; b < 4; b++) range_err[b] = range_err_port[b] != 0;
  // Which unit made an out-of-range scratchpad access (for the assertion port and bisect):
  // INP/WGT: gemm reads (ra), load writes (wb); ACC: gemm reads (ra) and writes (wa), post reads
  // (rb), load writes (wb); OUT: post writes (wa), store reads (rb). See range_eng below.

  // ------------------------------------------------------------------ assertions
  // Invariants that only a design bug (or an injected fault) can break. The checks are monitors
  // with their own state, not the design's guards: the token and queue monitors count pushes
  // and pops themselves, so a corrupted token counter or queue level is caught when the design
  // acts on it. The first failure latches its code, engine, command, values and cycle on the
  // assertion port, which the harness reads (nothing parses the $error text below).
  logic [7:0] tok_mon[4];  // tokens per FIFO as the monitor counts them
  logic [3:0] q_mon[3];    // queue occupancy (ld, cmp, st) as the monitor counts it
  logic q_push[3], q_pop[3];
  assign q_push = '{ldq_push, cmpq_push, stq_push};
  assign q_pop = '{ldq_pop, cmpq_pop, stq_pop};
  always_ff @(posedge clk) begin
    for (int t = 0; t < 4; t++) begin
      if (!rst_n || (doorbell && !running)) tok_mon[t] <= '0;
      else tok_mon[t] <= tok_mon[t] + {7'd0, tok_push[t]} - {7'd0, tok_pop[t]};
    end
    for (int q = 0; q < 3; q++) begin
      if (!rst_n) q_mon[q] <= '0;
      else q_mon[q] <= q_mon[q] + {3'd0, q_push[q]} - {3'd0, q_pop[q]};
    end
  end
  logic [2:0] q_ovf;           // per queue (ld, cmp, st): pushed while full
  logic [3:0] tok_uf, tok_of;  // per token FIFO: popped while empty, pushed while full
  always_comb begin
    for (int q = 0; q < 3; q++)
      q_ovf[q] = q_overflow[q] || (q_push[q] && !q_pop[q] && q_mon[q] == 4'd8);
    for (int t = 0; t < 4; t++) begin
      tok_uf[t] = tok_pop[t] && (tok_mon[t] == 8'd0 || tokens[t] == 8'd0);
      tok_of[t] = tok_push[t] && !tok_pop[t] && (tok_mon[t] == 8'd255 || tokens[t] == 8'd255);
    end
  end
  // Who pops and pushes each token FIFO (0 L->C, 1 C->L, 2 C->S, 3 S->C). The compute engine
  // reports as gemm; the opcode of its command tells GEMM from POST.
  localparam logic [2:0] TOK_POPPER[4] = '{ENG_GEMM, ENG_LOAD, ENG_STORE, ENG_GEMM};
  localparam logic [2:0] TOK_PUSHER[4] = '{ENG_LOAD, ENG_GEMM, ENG_GEMM, ENG_STORE};
  function automatic logic [31:0] cmd_of(logic [2:0] eng, logic [15:0] ring_index,
                                         logic [31:0] ld, logic [31:0] cmp, logic [31:0] st);
    case (eng)
      ENG_LOAD: return ld;
      ENG_GEMM, ENG_POST: return cmp;
      ENG_STORE: return st;
      default: return {16'd0, ring_index};
    endcase
  endfunction
  logic [2:0] range_eng;
  always_comb begin
    range_eng = ENG_GEMM;
    if (range_err_port[0][0] || range_err_port[1][0] || range_err_port[2][0] ||
        range_err_port[2][2]) range_eng = ENG_GEMM;
    else if (range_err_port[0][3] || range_err_port[1][3] || range_err_port[2][3])
      range_eng = ENG_LOAD;
    else if (range_err_port[2][1] || range_err_port[3][2]) range_eng = ENG_POST;
    else if (range_err_port[3][1]) range_eng = ENG_STORE;
  end
  logic [7:0] a_code;
  logic [2:0] a_eng;
  logic [31:0] a_v0, a_v1;
  always_comb begin
    a_code = 8'd0;
    a_eng = ENG_FETCH;
    a_v0 = '0;
    a_v1 = '0;
    if (q_ovf != 0) begin
      a_code = A_QUEUE_OVERFLOW;
      a_v0 = {29'd0, q_ovf[2], q_ovf[1], q_ovf[0]};
    end else if (tok_uf != 0) begin
      a_code = A_TOKEN_UNDERFLOW;
      for (int t = 3; t >= 0; t--)
        if (tok_uf[t]) begin
          a_eng = TOK_POPPER[t];
          a_v0 = t;
          a_v1 = {24'd0, tokens[t]};
        end
    end else if (tok_of != 0) begin
      a_code = A_TOKEN_OVERFLOW;
      for (int t = 3; t >= 0; t--)
        if (tok_of[t]) begin
          a_eng = TOK_PUSHER[t];
          a_v0 = t;
          a_v1 = {24'd0, tokens[t]};
        end
    end else if (error_pulse) begin
      a_code = A_ILLEGAL_COMMAND;
      a_v0 = {28'd0, fetch_cmd[3:0]};
      a_v1 = {28'd0, fetch_cmd[7:4]};
    end else if (unknown_tag) begin
      a_code = A_UNKNOWN_TAG;
      a_eng = dram_resp_tag[4:3] == SRC_FETCH ? ENG_FETCH :
              dram_resp_tag[4:3] == SRC_LOAD ? ENG_LOAD : ENG_STORE;
      a_v0 = {27'd0, dram_resp_tag};
    end else if (range_err != 0) begin
      a_code = A_SPAD_RANGE;
      a_eng = range_eng;
      a_v0 = {28'd0, range_err[0], range_err[1], range_err[2], range_err[3]};
    end
  end
  logic [7:0] assert_q;
  logic [2:0] assert_eng_q;
  logic [31:0] assert_cmd_q, assert_v0_q, assert_v1_q;
  logic [63:0] assert_cycle_q;
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      assert_q <= 8'd0;
      assert_eng_q <= '0;
      assert_cmd_q <= '0;
      assert_v0_q <= '0;
      assert_v1_q <= '0;
      assert_cycle_q <= '0;
    end else if (assert_q == 8'd0 && a_code != 8'd0) begin
      assert_q <= a_code;
      assert_eng_q <= a_eng;
      assert_cmd_q <= cmd_of(a_eng, head, load_id, compute_id, store_id);
      assert_v0_q <= a_v0;
      assert_v1_q <= a_v1;
      assert_cycle_q <= cycle;
    end
  end
  assign assert_code = assert_q;
  assign assert_engine = assert_eng_q;
  assign assert_cmd = assert_cmd_q;
  assign assert_value0 = assert_v0_q;
  assign assert_value1 = assert_v1_q;
  assign assert_cycle = assert_cycle_q;
`ifndef SYNTHESIS
  // For a simulator's log only.
  always_ff @(posedge clk) begin
    if (rst_n) assert (a_code == 8'd0) else $error("NPU ASSERT code %0d at cycle %0d", a_code, cycle);
  end
`endif
endmodule
