package main

func (a *app) whatif(args []string) error { return usagef("whatif: not yet") }
