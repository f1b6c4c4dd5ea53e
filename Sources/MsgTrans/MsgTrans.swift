// MsgTrans
