// SPDX-License-Identifier: GPL-2.0
/*
 * The CFI interpreter of the .eh_frame reader: a CIE's initial
 * instructions and then an FDE's, row by row, for the registers the
 * caller tracks.  It follows what binutils' readelf and libgcc do where
 * DWARF leaves room: DW_CFA_remember_state saves the CFA rule too, and
 * DW_CFA_def_cfa_register and DW_CFA_def_cfa_offset keep the offset and
 * the register of the last register-based CFA rule.
 */
#include <elf.h>
#include <stdio.h>
#include <string.h>

#include "eh-frame-internal.h"

struct ehf_state {
	u32 cfa_reg;
	s64 cfa_off;
	bool cfa_set;
	bool cfa_is_expr;
	struct ehf_loc cfa_expr;
	struct ehf_loc reg[EHF_MAX_TRACKED];
	bool ra_mangled;
};

struct ehf_vm {
	struct ehf_section *s;
	const struct ehf_fde *fde;
	struct ehf_track track;	/* EHF_REG_RA resolved */
	struct ehf_state st;
	struct ehf_state init;	/* after the CIE, for DW_CFA_restore */
	struct ehf_state stack[EHF_STATE_DEPTH];
	unsigned int depth;
	u64 loc;
	u64 end;
	u64 row_insn;
	u64 args_size;
	bool in_cie;
	ehf_row_fn fn;
	void *arg;
};

static int ehf_track_idx(const struct ehf_vm *vm, u32 reg)
{
	unsigned int i;

	for (i = 0; i < vm->track.nr; i++)
		if (vm->track.reg[i] == reg)
			return i;
	return -1;
}

static void ehf_row_cfa(const struct ehf_state *st, struct ehf_loc *cfa)
{
	memset(cfa, 0, sizeof(*cfa));
	if (!st->cfa_set)
		return;
	if (st->cfa_is_expr) {
		*cfa = st->cfa_expr;
		return;
	}
	cfa->kind = EHF_RULE_LOC;
	cfa->op = DW_CFA_def_cfa;
	cfa->reg = st->cfa_reg;
	cfa->off = st->cfa_off;
}

static int ehf_emit(struct ehf_vm *vm, u64 to)
{
	struct ehf_row row;

	memset(&row, 0, sizeof(row));
	row.pc = vm->loc;
	row.end = to;
	row.insn_off = vm->row_insn;
	ehf_row_cfa(&vm->st, &row.cfa);
	memcpy(row.reg, vm->st.reg, sizeof(row.reg));
	row.ra_mangled = vm->st.ra_mangled;
	row.args_size = vm->args_size;
	vm->loc = to;
	return vm->fn(&row, vm->arg);
}

static int ehf_advance_to(struct ehf_vm *vm, u64 loc, u64 at)
{
	int ret = 0;

	if (vm->in_cie)
		return ehf_bad(vm->s, at, "location advance in a CIE");
	if (loc < vm->loc)
		return ehf_bad(vm->s, at, "location moves backwards");
	/* Rows past the end of the function describe nothing. */
	if (loc > vm->end)
		loc = vm->end;
	if (loc > vm->loc)
		ret = ehf_emit(vm, loc);
	vm->row_insn = at;
	return ret;
}

static int ehf_advance(struct ehf_vm *vm, u64 delta, u64 at)
{
	u64 bytes, loc;

	if (__builtin_mul_overflow(delta, vm->fde->cie.code_align, &bytes) ||
	    __builtin_add_overflow(vm->loc, bytes, &loc))
		return ehf_bad(vm->s, at, "location advance overflows");
	return ehf_advance_to(vm, loc, at);
}

static int ehf_op_loc(struct ehf_vm *vm, struct ehf_cur *c, u8 op, u64 at)
{
	static const u8 sizes[] = {
		[DW_CFA_advance_loc1] = sizeof(u8),
		[DW_CFA_advance_loc2] = sizeof(u16),
		[DW_CFA_advance_loc4] = sizeof(u32),
	};
	u64 v;
	int ret;

	if (op == DW_CFA_set_loc) {
		ret = ehf_get_ptr(c, vm->fde->cie.fde_enc, &v);
		return ret ? ret : ehf_advance_to(vm, v, at);
	}
	ret = ehf_get(c, sizes[op], &v, "truncated location advance");
	return ret ? ret : ehf_advance(vm, v, at);
}

/* An unsigned factored offset operand times the data alignment factor. */
static int ehf_get_factored(struct ehf_vm *vm, struct ehf_cur *c, bool sgn,
			    bool negate, s64 *off)
{
	u64 at = c->pos, u;
	s64 v;
	int ret;

	if (sgn) {
		ret = ehf_get_sleb(c, &v);
	} else {
		ret = ehf_get_uleb(c, &u);
		v = (s64)u;
		if (!ret && u > INT64_MAX)
			return ehf_bad(vm->s, at, "offset too large");
	}
	if (ret)
		return ret;
	if (negate)
		v = -v;
	if (__builtin_mul_overflow(v, vm->fde->cie.data_align, off))
		return ehf_bad(vm->s, at, "offset too large");
	return 0;
}

/*
 * A trailing DW_OP_plus_uconst: after a load it is @l's addend, else part
 * of the offset.  False if it does not fit.
 */
static bool ehf_expr_plus(const u8 *d, u64 end, u64 *pos, struct ehf_loc *l)
{
	u64 k;

	if (*pos >= end || d[*pos] != DW_OP_plus_uconst)
		return true;
	(*pos)++;
	if (ehf_uleb(d, end, pos, &k) || k > INT32_MAX)
		return false;
	if (l->deref)
		l->add = (s64)k;
	else if (__builtin_add_overflow(l->off, (s64)k, &l->off))
		return false;
	return true;
}

/*
 * Decompose [DW_OP_breg* off] [DW_OP_deref] [DW_OP_plus_uconst k] into @l;
 * anything else is COMPLEX.
 */
static void ehf_expr_decompose(const struct ehf_section *s, u64 pos, u64 end,
			       struct ehf_loc *l)
{
	u64 reg = 0;
	s64 off;
	u8 op;

	l->kind = EHF_RULE_COMPLEX;
	if (pos >= end)
		return;
	op = s->data[pos++];
	if (op >= DW_OP_breg0 && op <= DW_OP_breg31)
		reg = op - DW_OP_breg0;
	else if (op != DW_OP_bregx ||
		 ehf_uleb(s->data, end, &pos, &reg) || reg >= EHF_REG_RA)
		return;
	if (ehf_sleb(s->data, end, &pos, &off))
		return;
	l->off = off;
	l->deref = 0;
	if (pos < end && s->data[pos] == DW_OP_deref) {
		l->deref = 1;
		pos++;
	}
	if (!ehf_expr_plus(s->data, end, &pos, l) || pos != end)
		return;
	l->kind = EHF_RULE_LOC;
	l->cfa_based = false;
	l->reg = (u32)reg;
}

/* The block operand of the expression opcodes, decomposed into @l. */
static int ehf_get_expr(struct ehf_cur *c, struct ehf_loc *l)
{
	u64 len;
	int ret = ehf_get_uleb(c, &len);

	if (ret)
		return ret;
	if (len > c->end - c->pos)
		return ehf_bad(c->s, c->pos, "expression past the instructions");
	memset(l, 0, sizeof(*l));
	l->expr = c->pos;
	l->expr_len = len;
	ehf_expr_decompose(c->s, c->pos, c->pos + len, l);
	c->pos += len;
	return 0;
}

static int ehf_op_cfa(struct ehf_vm *vm, struct ehf_cur *c, u8 op)
{
	struct ehf_state *st = &vm->st;
	bool sf = op == DW_CFA_def_cfa_sf || op == DW_CFA_def_cfa_offset_sf;
	u64 off;
	int ret = 0;

	if (op == DW_CFA_def_cfa_expression) {
		ret = ehf_get_expr(c, &st->cfa_expr);
		st->cfa_expr.op = op;
		st->cfa_set = true;
		st->cfa_is_expr = true;
		return ret;
	}
	if (op != DW_CFA_def_cfa_offset && op != DW_CFA_def_cfa_offset_sf) {
		ret = ehf_get_reg(c, &st->cfa_reg);
		st->cfa_is_expr = false;
		st->cfa_set = true;
	}
	if (ret || op == DW_CFA_def_cfa_register)
		return ret;
	if (sf)
		return ehf_get_factored(vm, c, true, false, &st->cfa_off);
	ret = ehf_get_uleb(c, &off);
	if (!ret && off > INT64_MAX)
		return ehf_bad(vm->s, c->pos - 1, "CFA offset too large");
	st->cfa_off = (s64)off;
	return ret;
}

static void ehf_set_reg(struct ehf_vm *vm, u32 reg, const struct ehf_loc *l)
{
	int i = ehf_track_idx(vm, reg);

	if (i >= 0)
		vm->st.reg[i] = *l;
}

static void ehf_restore_reg(struct ehf_vm *vm, u32 reg)
{
	int i = ehf_track_idx(vm, reg);

	if (i >= 0)
		vm->st.reg[i] = vm->init.reg[i];
}

/* The operands after the register of a register opcode, as a rule. */
static int ehf_reg_rule(struct ehf_vm *vm, struct ehf_cur *c, u8 op,
			struct ehf_loc *l)
{
	bool val = op == DW_CFA_val_offset || op == DW_CFA_val_offset_sf;
	int ret;

	l->op = op;
	l->kind = EHF_RULE_LOC;
	switch (op) {
	case DW_CFA_undefined:
		l->kind = EHF_RULE_UNDEF;
		return 0;
	case DW_CFA_same_value:
		l->kind = EHF_RULE_SAME;
		return 0;
	case DW_CFA_register:
		return ehf_get_reg(c, &l->reg);
	case DW_CFA_expression:
	case DW_CFA_val_expression:
		ret = ehf_get_expr(c, l);
		l->op = op;
		if (!ret && l->kind == EHF_RULE_LOC && op == DW_CFA_expression)
			l->deref++;
		return ret;
	}
	l->cfa_based = true;
	l->deref = !val;
	return ehf_get_factored(vm, c, op == DW_CFA_offset_extended_sf ||
				op == DW_CFA_val_offset_sf,
				op == DW_CFA_GNU_negative_offset_extended,
				&l->off);
}

static int ehf_op_reg(struct ehf_vm *vm, struct ehf_cur *c, u8 op, u32 reg)
{
	struct ehf_loc l;
	int ret;

	if (op == DW_CFA_restore_extended) {
		ehf_restore_reg(vm, reg);
		return 0;
	}
	memset(&l, 0, sizeof(l));
	ret = ehf_reg_rule(vm, c, op, &l);
	if (!ret)
		ehf_set_reg(vm, reg, &l);
	return ret;
}

static int ehf_op_state(struct ehf_vm *vm, struct ehf_cur *c, u8 op, u64 at)
{
	switch (op) {
	case DW_CFA_remember_state:
		if (vm->depth == EHF_STATE_DEPTH)
			return ehf_bad(vm->s, at, "remember_state nested too deep");
		vm->stack[vm->depth++] = vm->st;
		return 0;
	case DW_CFA_restore_state:
		if (!vm->depth)
			return ehf_bad(vm->s, at, "restore_state without remember_state");
		vm->st = vm->stack[--vm->depth];
		return 0;
	case DW_CFA_GNU_args_size:
		return ehf_get_uleb(c, &vm->args_size);
	case DW_CFA_AARCH64_negate_ra_state:
		vm->st.ra_mangled = !vm->st.ra_mangled;
		return 0;
	}
	return ehf_bad(vm->s, at, "unknown CFA opcode");
}

static int ehf_exec_one(struct ehf_vm *vm, struct ehf_cur *c, u8 op, u64 at)
{
	u32 reg;
	int ret;

	switch (op & DW_CFA_HIGH_MASK) {
	case DW_CFA_advance_loc:
		return ehf_advance(vm, op & DW_CFA_LOW_MASK, at);
	case DW_CFA_offset:
		return ehf_op_reg(vm, c, DW_CFA_offset_extended,
				  op & DW_CFA_LOW_MASK);
	case DW_CFA_restore:
		ehf_restore_reg(vm, op & DW_CFA_LOW_MASK);
		return 0;
	}
	switch (op) {
	case DW_CFA_nop:
		return 0;
	case DW_CFA_set_loc:
	case DW_CFA_advance_loc1:
	case DW_CFA_advance_loc2:
	case DW_CFA_advance_loc4:
		return ehf_op_loc(vm, c, op, at);
	case DW_CFA_def_cfa:
	case DW_CFA_def_cfa_register:
	case DW_CFA_def_cfa_offset:
	case DW_CFA_def_cfa_expression:
	case DW_CFA_def_cfa_sf:
	case DW_CFA_def_cfa_offset_sf:
		return ehf_op_cfa(vm, c, op);
	case DW_CFA_offset_extended:
	case DW_CFA_restore_extended:
	case DW_CFA_undefined:
	case DW_CFA_same_value:
	case DW_CFA_register:
	case DW_CFA_expression:
	case DW_CFA_offset_extended_sf:
	case DW_CFA_val_offset:
	case DW_CFA_val_offset_sf:
	case DW_CFA_val_expression:
	case DW_CFA_GNU_negative_offset_extended:
		ret = ehf_get_reg(c, &reg);
		return ret ? ret : ehf_op_reg(vm, c, op, reg);
	}
	return ehf_op_state(vm, c, op, at);
}

static int ehf_exec(struct ehf_vm *vm, u64 pos, u64 end)
{
	struct ehf_cur c = { .s = vm->s, .pos = pos, .end = end };
	u64 at;
	u8 op;
	int ret;

	while (c.pos < c.end) {
		at = c.pos;
		ret = ehf_get_u8(&c, &op, "truncated instruction");
		if (!ret)
			ret = ehf_exec_one(vm, &c, op, at);
		if (ret)
			return ret;
	}
	return 0;
}

static int ehf_vm_init(struct ehf_vm *vm, struct ehf_section *s,
		       const struct ehf_fde *fde,
		       const struct ehf_track *track)
{
	unsigned int i;

	memset(vm, 0, sizeof(*vm));
	vm->s = s;
	vm->fde = fde;
	if (track->nr > EHF_MAX_TRACKED)
		return ehf_fail(s, fde->off, "too many registers tracked",
				-E2BIG);
	vm->track = *track;
	for (i = 0; i < track->nr; i++)
		if (track->reg[i] == EHF_REG_RA)
			vm->track.reg[i] = fde->cie.ra_reg;
	if (__builtin_add_overflow(fde->pc_begin, fde->pc_range, &vm->end))
		return ehf_bad(s, fde->off, "FDE address range wraps");
	vm->loc = fde->pc_begin;
	vm->row_insn = fde->insns;
	return 0;
}

/**
 * ehf_fde_rows() - run the CFI program of an FDE
 * @s: the section
 * @fde: the FDE, from ehf_next_fde()
 * @track: the registers whose rules the rows carry, in this order
 * @fn: called for every row, in address order; the rows cover the FDE's
 *      range without gaps
 * @arg: passed to @fn
 *
 * Return: 0, the first non-zero value @fn returned, or a negative errno
 * with @s->err naming the offending instruction.
 */
int ehf_fde_rows(struct ehf_section *s, const struct ehf_fde *fde,
		 const struct ehf_track *track, ehf_row_fn fn, void *arg)
{
	struct ehf_vm *vm = calloc(1, sizeof(*vm));
	int ret;

	if (!vm)
		return ehf_fail(s, fde->off, "out of memory", -ENOMEM);
	ret = ehf_vm_init(vm, s, fde, track);
	if (ret)
		goto free_vm;
	vm->fn = fn;
	vm->arg = arg;
	vm->in_cie = true;
	ret = ehf_exec(vm, fde->cie.insns, fde->cie.insns_end);
	if (ret)
		goto free_vm;
	vm->in_cie = false;
	vm->init = vm->st;
	ret = ehf_exec(vm, fde->insns, fde->insns_end);
	if (!ret && vm->loc < vm->end)
		ret = ehf_emit(vm, vm->end);
free_vm:
	free(vm);
	return ret;
}

